import CZlib

/// Streaming inflation with limits checked as output is produced, so a zlib bomb is
/// stopped after at most one chunk beyond the limit instead of after it has eaten memory.
public enum Inflate {
    public struct Limits: Sendable, Hashable {
        /// Most bytes the output may hold.
        public var maxOutputBytes: Int
        /// Most output bytes per input byte, checked once output passes `ratioGraceBytes`.
        public var maxRatio: Int
        /// Small bodies may compress very well (repeated JSON keys); only judge the ratio of
        /// outputs larger than this.
        public var ratioGraceBytes: Int

        public init(maxOutputBytes: Int = 64 << 20, maxRatio: Int = 200, ratioGraceBytes: Int = 1 << 20) {
            self.maxOutputBytes = maxOutputBytes
            self.maxRatio = maxRatio
            self.ratioGraceBytes = ratioGraceBytes
        }

        /// For blocks the daemon wrote itself: trusted, bounded only by sanity.
        public static let trusted = Limits(maxOutputBytes: 1 << 30, maxRatio: .max, ratioGraceBytes: .max)
    }

    public static func decompress(_ input: [UInt8], format: ZlibFormat, limits: Limits = .trusted) throws -> [UInt8] {
        try input.withUnsafeBufferPointer { try decompress($0, format: format, limits: limits) }
    }

    public static func decompress(_ input: UnsafeBufferPointer<UInt8>, format: ZlibFormat, limits: Limits = .trusted) throws -> [UInt8] {
        var stream = z_stream()
        var rc = CZlib_inflateInit2(&stream, format.windowBits)
        guard rc == Z_OK else { throw CompressionError.zlib(code: rc, detail: "inflateInit2 failed") }
        defer { inflateEnd(&stream) }
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.avail_in = uInt(input.count)
        var output: [UInt8] = []
        output.reserveCapacity(min(max(input.count * 4, 4096), limits.maxOutputBytes))
        let chunkSize = 64 * 1024
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        repeat {
            let produced: Int = chunk.withUnsafeMutableBufferPointer { buf in
                stream.next_out = buf.baseAddress
                stream.avail_out = uInt(chunkSize)
                rc = inflate(&stream, Z_NO_FLUSH)
                return chunkSize - Int(stream.avail_out)
            }
            switch rc {
            case Z_OK, Z_STREAM_END:
                break
            case Z_BUF_ERROR where stream.avail_in == 0:
                throw CompressionError.truncated(format: format.rawValue)
            case Z_NEED_DICT, Z_DATA_ERROR:
                let msg = stream.msg.map { String(cString: $0) } ?? "data error"
                throw CompressionError.corrupt(format: format.rawValue, detail: msg)
            case Z_MEM_ERROR:
                throw CompressionError.zlib(code: rc, detail: "out of memory")
            default:
                throw CompressionError.corrupt(format: format.rawValue, detail: "zlib code \(rc)")
            }
            if output.count + produced > limits.maxOutputBytes {
                throw CompressionError.outputLimit(limit: limits.maxOutputBytes)
            }
            output.append(contentsOf: chunk[0..<produced])
            // Judge the ratio against what zlib has consumed so far, not the whole body: a bomb
            // is then caught within its first megabyte of output instead of near the size limit.
            if output.count > limits.ratioGraceBytes, output.count / max(Int(stream.total_in), 1) > limits.maxRatio {
                throw CompressionError.ratioLimit(limit: limits.maxRatio)
            }
            if rc == Z_OK && stream.avail_in == 0 && produced < chunkSize {
                // zlib consumed everything, has room, and still wants more input.
                throw CompressionError.truncated(format: format.rawValue)
            }
        } while rc != Z_STREAM_END
        return output
    }
}
