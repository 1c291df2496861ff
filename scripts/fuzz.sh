#!/usr/bin/env bash
# Fuzzes the daemon's input parsers with libFuzzer + AddressSanitizer (issue 7, item 7):
#   FuzzEventDecoder     NDJSON / JSON-array telemetry events and JSON log records
#   FuzzTextLog          console-export text: entries with continuation lines, checked against
#                        the independent reader in Tests/TextExportReference
#   FuzzContentDecoding  Content-Encoding handling: identity, gzip, deflate (zlib vs raw detection)
#   FuzzPlist            the Info.plist / MAMEnvironment.plist importer (XML and binary)
#   FuzzOTLP             OTLP/HTTP logs: protobuf and JSON export requests, the OTLP -> native
#                        record mapping, and the probe telling OTLP JSON from NDJSON
#   FuzzRedactor         the structural redactor, with Foundation's JSON parser as the oracle:
#                        its output parses and keeps the input's structure (strings differ only
#                        where redacted)
#   FuzzCanonicalJSON    the canonical record form, against Foundation's JSON decoder: same
#                        structure in and out, and canonicalizing twice is the identity
#
# Usage: scripts/fuzz.sh [seconds-per-target] [target...]   (default 20 s, all seven targets)
# FUZZ_SEED (default 1) fixes libFuzzer's seed so a CI run is repeatable; set FUZZ_SEED=0 for
# a random seed when hunting locally (libFuzzer picks one). FUZZ_JOBS (default: the number of
# cores) targets run at a time, each on a core of its own for its full time.
#
# The Fuzz package (Fuzz/Package.swift) compiles the root package's sources through links made
# here, builds into Fuzz/.build (never the shared .build) and runs each target for a bounded
# time on a working copy of its seed corpus (Fuzz/corpus/<target>/, which stays untouched).
# Exits non-zero when any target crashes or a sanitizer reports; the reproducer is kept in
# Fuzz/runs/<target>/ and printed in hex.
set -euo pipefail
cd "$(dirname "$0")/../Fuzz"
fuzz=$PWD
seconds=${1:-20}
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(FuzzEventDecoder FuzzTextLog FuzzContentDecoding FuzzPlist FuzzOTLP FuzzRedactor FuzzCanonicalJSON)

# SwiftPM wants target sources inside the package root: link the root package's.
for module in TelemetryModel Compression CZlib CLibdeflate OTLP InfoPlist Privacy; do
    ln -sfn "../../Sources/$module" "Sources/$module"
done
ln -sfn ../../Tests/TextExportReference Sources/TextExportReference

echo "== building (swift build -Xswiftc -sanitize=fuzzer,address, in Fuzz/.build)"
build_log=$(mktemp)
# ld.gold warns about every ASan helper symbol it cannot export; the noise hides real errors.
if ! swift build --scratch-path "$fuzz/.build" -Xswiftc -sanitize=fuzzer,address >"$build_log" 2>&1; then
    grep -v "Cannot export local symbol" "$build_log" >&2
    rm -f "$build_log"
    exit 1
fi
rm -f "$build_log"
bin=$(swift build --scratch-path "$fuzz/.build" --show-bin-path)

# One target's bounded run in its own working directory; its exit status goes to
# $run/status so the report below can be printed in target order after parallel runs.
fuzz_one() {
    local target=$1 run=$fuzz/runs/$1 leaks=1 status=0
    rm -rf "$run"
    mkdir -p "$run/corpus"
    cp "$fuzz/corpus/$target/"* "$run/corpus/"
    # swift-corelibs-foundation's CFPropertyList leaks the CFError of every plist it refuses
    # (seen at PropertyListSerialization.propertyList(from:) on Linux, Swift 6.3.1): toolchain
    # noise that would stop the plist run at its first bad input. Leaks stay on elsewhere.
    [[ $target == FuzzPlist ]] && leaks=0
    # rss_limit and malloc_limit keep a decompression bomb that slips past the limits from
    # looking like anything but a finding; timeout flags a single input that hangs.
    # Swift's own crash backtracer fights ASan's handler (it hung for minutes, orphaned): off.
    # lsan-suppressions.txt: one-time allocations of Swift's regex runtime (FuzzTextLog's oracle).
    (cd "$run" && SWIFT_BACKTRACE=enable=no LSAN_OPTIONS="suppressions=$fuzz/lsan-suppressions.txt" "$bin/$target" corpus \
        -max_total_time="$seconds" -seed="${FUZZ_SEED:-1}" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
        -max_len=65536 -detect_leaks="$leaks" -print_final_stats=1 -artifact_prefix="$run/" \
        >"$run/fuzz.log" 2>&1) || status=$?
    echo "$status" >"$run/status"
}

# libFuzzer runs one process per target on one core, so FUZZ_JOBS targets (default: one per
# core) run side by side: each still gets its full time on a core of its own, and the step
# takes about 1/FUZZ_JOBS of the serial time.
jobs_max=${FUZZ_JOBS:-$(nproc)}
echo "== ${#targets[@]} targets, ${seconds}s each, $jobs_max at a time"
for target in "${targets[@]}"; do
    while (($(jobs -rp | wc -l) >= jobs_max)); do
        wait -n || true
    done
    fuzz_one "$target" &
done
wait

failed=()
for target in "${targets[@]}"; do
    run=$fuzz/runs/$target
    status=$(cat "$run/status" 2>/dev/null || echo 1)
    echo "== $target: ${seconds}s"
    grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|#[0-9]+ +DONE)' "$run/fuzz.log" || true
    if [[ $status != 0 ]]; then
        failed+=("$target")
        echo "!! $target failed (exit $status); log: Fuzz/runs/$target/fuzz.log" >&2
        grep -E 'ERROR: |Fatal error|SUMMARY|==[0-9]+==' "$run/fuzz.log" | head -n 20 >&2 || true
        for artifact in "$run"/crash-* "$run"/leak-* "$run"/timeout-* "$run"/oom-* "$run"/slow-unit-*; do
            [[ -e $artifact ]] || continue
            echo "   reproducer $(basename "$artifact") ($(wc -c <"$artifact") bytes):" >&2
            xxd -p "$artifact" | tr -d '\n' | head -c 4096 >&2
            echo >&2
            echo "   rerun: $bin/$target $artifact" >&2
        done
    fi
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "fuzz.sh: findings in: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz.sh: no crashes in ${targets[*]} (${seconds}s each)"
