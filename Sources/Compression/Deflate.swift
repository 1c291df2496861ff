import CZlib

/// One-shot DEFLATE compression of a whole block (a stored batch, a test payload).
public enum Deflate {
    /// Compresses `input` at `level` (0-9; -1 is zlib's default, 6). A preset `dictionary`
    /// (zlib format only) primes the window with text the input is likely to repeat, so even
    /// its first occurrences become back-references; the reader must pass the same bytes.
    public static func compress(
        _ input: [UInt8], level: Int32 = 6, format: ZlibFormat = .zlib, dictionary: [UInt8]? = nil
    ) throws -> [UInt8] {
        var stream = z_stream()
        var rc = CZlib_deflateInit2(&stream, level, Z_DEFLATED, format.windowBits, 8, Z_DEFAULT_STRATEGY)
        guard rc == Z_OK else { throw CompressionError.zlib(code: rc, detail: "deflateInit2 failed") }
        defer { deflateEnd(&stream) }
        if let dictionary {
            rc = dictionary.withUnsafeBufferPointer { deflateSetDictionary(&stream, $0.baseAddress, uInt($0.count)) }
            guard rc == Z_OK else { throw CompressionError.zlib(code: rc, detail: "deflateSetDictionary failed") }
        }
        let bound = Int(deflateBound(&stream, uLong(input.count))) + 32
        var output = [UInt8](repeating: 0, count: bound)
        let written: Int = input.withUnsafeBufferPointer { inBuf in
            output.withUnsafeMutableBufferPointer { outBuf in
                stream.next_in = UnsafeMutablePointer(mutating: inBuf.baseAddress)
                stream.avail_in = uInt(inBuf.count)
                stream.next_out = outBuf.baseAddress
                stream.avail_out = uInt(outBuf.count)
                rc = deflate(&stream, Z_FINISH)
                return outBuf.count - Int(stream.avail_out)
            }
        }
        guard rc == Z_STREAM_END else { throw CompressionError.zlib(code: rc, detail: "deflate did not finish") }
        // A copy of the written bytes, not the bound-sized buffer: a batch waiting for its
        // commit (or a segment for its transaction) would otherwise hold its raw size.
        return Array(output[..<written])
    }
}
