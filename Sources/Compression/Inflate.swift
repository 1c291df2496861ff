import CZlib

/// Streaming inflation with limits checked as output is produced, so a zlib bomb is
/// stopped after at most one chunk beyond the limit instead of after it has eaten memory.
///
/// The whole input is decoded or the call throws: a gzip body made of several members
/// (what `cat a.gz b.gz` produces, legal per RFC 1952) is inflated member by member, and
/// bytes after the end of the stream that are not another gzip member are refused as
/// trailing data. Acknowledging only the first member would silently lose the rest.
public enum Inflate {
    public struct Limits: Sendable, Hashable {
        /// Most bytes the output may hold (all members together).
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

    /// Told the size of every chunk of output before it is kept, and may throw to stop
    /// inflating: how a caller counts decompressed bytes against a memory budget while
    /// they are produced rather than after the whole body sits in memory.
    public typealias OutputReservation = (Int) throws -> Void

    static let chunkSize = 64 * 1024

    /// `dictionary` is the preset dictionary the stream was compressed with, if any: a
    /// stream that asks for one when none (or another) is given is refused as corrupt.
    public static func decompress(
        _ input: [UInt8], format: ZlibFormat, limits: Limits = .trusted, dictionary: [UInt8]? = nil,
        reserve: OutputReservation = { _ in }
    ) throws -> [UInt8] {
        try input.withUnsafeBufferPointer {
            try decompress($0, format: format, limits: limits, dictionary: dictionary, reserve: reserve)
        }
    }

    public static func decompress(
        _ input: UnsafeBufferPointer<UInt8>, format: ZlibFormat, limits: Limits = .trusted, dictionary: [UInt8]? = nil,
        reserve: OutputReservation = { _ in }
    ) throws -> [UInt8] {
        var stream = z_stream()
        var rc = CZlib_inflateInit2(&stream, format.windowBits)
        guard rc == Z_OK else { throw CompressionError.zlib(code: rc, detail: "inflateInit2 failed") }
        defer { inflateEnd(&stream) }
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.avail_in = uInt(input.count)
        var output: [UInt8] = []
        output.reserveCapacity(min(max(input.count * 4, 4096), limits.maxOutputBytes))
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        // Input consumed by the gzip members already finished (`total_in` restarts per member).
        var consumedByEarlierMembers = 0
        while true {
            let produced: Int = chunk.withUnsafeMutableBufferPointer { buf in
                stream.next_out = buf.baseAddress
                stream.avail_out = uInt(chunkSize)
                rc = inflate(&stream, Z_NO_FLUSH)
                if rc == Z_NEED_DICT, let dictionary {
                    // zlib stops at the header to ask for the dictionary (checked against
                    // the Adler-32 the writer put there), then carries on where it stopped.
                    rc = dictionary.withUnsafeBufferPointer { inflateSetDictionary(&stream, $0.baseAddress, uInt($0.count)) }
                    if rc == Z_OK { rc = inflate(&stream, Z_NO_FLUSH) }
                }
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
            if produced > 0 {
                if output.count + produced > limits.maxOutputBytes {
                    throw CompressionError.outputLimit(limit: limits.maxOutputBytes)
                }
                try reserve(produced)
                output.append(contentsOf: chunk[0..<produced])
                // Judge the ratio against what zlib has consumed so far, not the whole body: a
                // bomb is then caught within its first megabyte of output instead of near the
                // size limit. Members share one budget, so a bomb cannot hide in many members.
                let consumed = consumedByEarlierMembers + Int(stream.total_in)
                if output.count > limits.ratioGraceBytes, output.count / max(consumed, 1) > limits.maxRatio {
                    throw CompressionError.ratioLimit(limit: limits.maxRatio)
                }
            }
            if rc == Z_STREAM_END {
                let rest = Int(stream.avail_in)
                if rest == 0 { return output }
                guard format == .gzip, rest >= 2, stream.next_in[0] == 0x1F, stream.next_in[1] == 0x8B else {
                    throw CompressionError.trailingData(format: format.rawValue, bytes: rest)
                }
                // Another gzip member follows: decode it into the same output.
                consumedByEarlierMembers += Int(stream.total_in)
                rc = inflateReset(&stream)
                guard rc == Z_OK else { throw CompressionError.zlib(code: rc, detail: "inflateReset failed") }
                continue
            }
            if stream.avail_in == 0 && produced < chunkSize {
                // zlib consumed everything, has room, and still wants more input.
                throw CompressionError.truncated(format: format.rawValue)
            }
        }
    }
}
