#ifndef CLIBDEFLATE_SHIM_H
#define CLIBDEFLATE_SHIM_H
/* libdeflate: whole-buffer DEFLATE/zlib decoding, for stored blocks whose inflated size
   is recorded beside them (Compression's Inflate+KnownSize.swift). */
#include <libdeflate.h>
#endif
