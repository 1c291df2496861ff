#ifndef CLIBFUZZER_H
#define CLIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

/* libFuzzer's driver, linked in by -sanitize=fuzzer. SwiftPM on Linux renames an executable's
   entry point to <Target>_main and aliases `main` to it, so libFuzzer's own `main` is never
   linked: each fuzz target's main.swift calls this instead. */
int LLVMFuzzerRunDriver(int *argc, char ***argv,
                        int (*UserCb)(const uint8_t *Data, size_t Size));
#endif
