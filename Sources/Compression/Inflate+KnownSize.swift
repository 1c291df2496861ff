import CZlib

extension Inflate {
    /// Inflates a block the daemon wrote itself whose inflated size it recorded beside it, in
    /// one zlib call straight into an array of exactly that size: no chunk copies and no
    /// growing by doubling (which, for a query reading hundreds of megabytes of segments, was
    /// a large share of its copying and page faults). The size is checked, not trusted: a
    /// stream that ends early, runs past it or is corrupt is refused.
    public static func decompress(
        _ input: UnsafeRawBufferPointer, format: ZlibFormat, dictionary: [UInt8]? = nil, exactSize: Int
    ) throws -> [UInt8] {
        var stream = z_stream()
        var rc = CZlib_inflateInit2(&stream, format.windowBits)
        guard rc == Z_OK else { throw CompressionError.zlib(code: rc, detail: "inflateInit2 failed") }
        defer { inflateEnd(&stream) }
        stream.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: UInt8.self).baseAddress)
        stream.avail_in = uInt(input.count)
        // One spare byte so a stream longer than recorded shows up as output, not as a stall.
        var produced = 0
        let output = [UInt8](unsafeUninitializedCapacity: exactSize + 1) { buffer, initialized in
            stream.next_out = buffer.baseAddress
            stream.avail_out = uInt(buffer.count)
            rc = inflate(&stream, Z_FINISH)
            if rc == Z_NEED_DICT, let dictionary {
                rc = dictionary.withUnsafeBufferPointer { inflateSetDictionary(&stream, $0.baseAddress, uInt($0.count)) }
                if rc == Z_OK { rc = inflate(&stream, Z_FINISH) }
            }
            produced = buffer.count - Int(stream.avail_out)
            initialized = min(produced, exactSize)
        }
        switch rc {
        case Z_STREAM_END:
            guard produced == exactSize, stream.avail_in == 0 else {
                throw CompressionError.corrupt(
                    format: format.rawValue, detail: "inflated \(produced) bytes where \(exactSize) were recorded")
            }
            return output
        case Z_BUF_ERROR where stream.avail_out == 0, Z_OK where stream.avail_out == 0:
            throw CompressionError.corrupt(format: format.rawValue, detail: "inflates past the \(exactSize) bytes recorded")
        case Z_BUF_ERROR:
            throw CompressionError.truncated(format: format.rawValue)
        case Z_MEM_ERROR:
            throw CompressionError.zlib(code: rc, detail: "out of memory")
        default:
            let msg = stream.msg.map { String(cString: $0) } ?? "zlib code \(rc)"
            throw CompressionError.corrupt(format: format.rawValue, detail: msg)
        }
    }
}

extension Inflate {
    /// Inflates a block whose inflated size a row records beside it, where rows that older
    /// versions wrote may have counted differently: whole, straight into an array of that size,
    /// when the stream is exactly that long (every row this version writes; zlib streams by
    /// libdeflate, `WholeBufferInflate`), and through the streaming path otherwise, whose checks
    /// and errors then apply. A mismatch costs a second inflation, never a refusal of a
    /// readable row.
    public static func decompress(_ input: UnsafeRawBufferPointer, format: ZlibFormat, expectedSize: Int) throws -> [UInt8] {
        if (0...Limits.trusted.maxOutputBytes).contains(expectedSize) {
            if format == .zlib {
                if let output = WholeBufferInflate.zlib(input, size: expectedSize) { return output }
            } else if let output = try? decompress(input, format: format, exactSize: expectedSize) {
                return output
            }
        }
        return try decompress(input.bindMemory(to: UInt8.self), format: format)
    }
}

extension Inflate {
    /// Inflates a zlib block the daemon wrote itself whose inflated size is not recorded (a
    /// fresh batch's keys block): whole, by libdeflate (`WholeBufferInflate`), and through the
    /// streaming path when that fails, whose checks and errors then apply.
    public static func decompressStored(_ input: UnsafeRawBufferPointer) throws -> [UInt8] {
        if let output = WholeBufferInflate.zlib(input, limit: Limits.trusted.maxOutputBytes) { return output }
        return try decompress(input.bindMemory(to: UInt8.self), format: .zlib)
    }
}
