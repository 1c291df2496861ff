import CLibdeflate

/// zlib streams inflated whole with libdeflate when their inflated size is known: a stored
/// batch's payload, written by zlib, whose `rawBytes` the row records. libdeflate decodes a
/// buffer at once (no stream state kept between calls, a vectorised Adler-32) at about 2.5x
/// zlib 1.2.13's `inflate` on the daemon's batches, and a fresh read is mostly that
/// (BENCHMARKS.md, "Reads: the daemon profiled"). It answers only when the stream is exactly `size` bytes long,
/// uses all of its input and checks out; anything else is left to zlib's streaming path, whose
/// checks and error messages then apply. No preset dictionaries (segments use zlib).
///
/// A stream whose size is not recorded (a fresh batch's keys block) is decoded into a guess
/// of its size, and again into a larger one when it does not fit: zlib's trailer does not
/// carry the size, and decoding twice at this speed still beats zlib once.
enum WholeBufferInflate {
    /// The first guess of an unrecorded size, as a multiple of the stream's length: above the
    /// 4-6x a batch's keys block compresses by, so one decode is the rule.
    static let sizeGuessRatio = 8

    /// The inflated bytes of a stream of unrecorded size, or nil when libdeflate does not decode
    /// it whole within `limit` bytes with nothing left over.
    static func zlib(_ input: UnsafeRawBufferPointer, limit: Int) -> [UInt8]? {
        guard let decompressor = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        var capacity = min(max(input.count * sizeGuessRatio, 4096), limit)
        while true {
            let attempt = decode(input, capacity: capacity, with: decompressor)
            switch attempt.result {
            case LIBDEFLATE_SUCCESS where attempt.consumed == input.count: return attempt.output
            case LIBDEFLATE_INSUFFICIENT_SPACE where capacity < limit:
                capacity = min(capacity.multipliedReportingOverflow(by: 4).partialValue, limit)
            default: return nil
            }
        }
    }

    /// The inflated bytes, or nil when libdeflate does not decode `input` to exactly `size`
    /// bytes with nothing left over (damaged, another size, trailing bytes).
    static func zlib(_ input: UnsafeRawBufferPointer, size: Int) -> [UInt8]? {
        guard size >= 0, let decompressor = libdeflate_alloc_decompressor() else { return nil }
        defer { libdeflate_free_decompressor(decompressor) }
        // One byte spare, so that a longer stream shows as output past `size`, not as success.
        let attempt = decode(input, capacity: size + 1, with: decompressor)
        guard attempt.result == LIBDEFLATE_SUCCESS, attempt.output.count == size, attempt.consumed == input.count else { return nil }
        return attempt.output
    }

    /// One libdeflate call into an array of `capacity` bytes: its result, the bytes it produced
    /// (none unless it succeeded) and how much input it used.
    private static func decode(
        _ input: UnsafeRawBufferPointer, capacity: Int, with decompressor: OpaquePointer
    ) -> (result: libdeflate_result, output: [UInt8], consumed: Int) {
        var consumed = 0
        var result = LIBDEFLATE_BAD_DATA
        let output = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, initialized in
            var produced = 0
            result = libdeflate_zlib_decompress_ex(
                decompressor, input.baseAddress, input.count, buffer.baseAddress, buffer.count, &consumed, &produced)
            initialized = result == LIBDEFLATE_SUCCESS ? produced : 0
        }
        return (result, output, consumed)
    }
}
