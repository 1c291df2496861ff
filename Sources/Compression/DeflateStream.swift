import CZlib

/// DEFLATE fed piece by piece: the input is compressed as it arrives and only the output is
/// kept, so a writer that produces its text in pieces (the compactor, record by record)
/// never holds the whole text. The output equals ``Deflate/compress(_:level:format:dictionary:)``'s
/// for the same bytes, level and dictionary, however the input is cut (zlib's output does not
/// depend on it at these settings); `DeflateStreamTests` checks that.
///
/// zlib's state costs about 256 KiB at the default memory level whatever the input's size.
public final class DeflateStream {
    /// zlib keeps a pointer back to its `z_stream`, so the stream lives at a fixed address.
    private let stream: UnsafeMutablePointer<z_stream>
    /// Where zlib writes; what it wrote is copied to `output`.
    private let chunk: UnsafeMutableBufferPointer<UInt8>
    private var output: [UInt8] = []
    private var finished = false
    private static let chunkSize = 16 * 1024

    public init(level: Int32 = 6, format: ZlibFormat = .zlib, dictionary: [UInt8]? = nil) throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        chunk = .allocate(capacity: Self.chunkSize)
        var rc = CZlib_deflateInit2(stream, level, Z_DEFLATED, format.windowBits, 8, Z_DEFAULT_STRATEGY)
        guard rc == Z_OK else {
            stream.deallocate()
            chunk.deallocate()
            throw CompressionError.zlib(code: rc, detail: "deflateInit2 failed")
        }
        if let dictionary {
            rc = dictionary.withUnsafeBufferPointer { deflateSetDictionary(stream, $0.baseAddress, uInt($0.count)) }
            guard rc == Z_OK else {
                deflateEnd(stream)
                stream.deallocate()
                chunk.deallocate()
                throw CompressionError.zlib(code: rc, detail: "deflateSetDictionary failed")
            }
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deallocate()
        chunk.deallocate()
    }

    /// Compressed bytes produced so far (zlib holds back what it has not yet coded).
    public var byteCount: Int { output.count }

    /// Compresses `input`; what zlib cannot code yet stays in its window until later input or
    /// ``finish()``.
    public func append(_ input: UnsafeBufferPointer<UInt8>) throws {
        precondition(!finished, "input after finish")
        guard !input.isEmpty else { return }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.pointee.avail_in = uInt(input.count)
        while stream.pointee.avail_in > 0 {
            _ = try run(Z_NO_FLUSH)
        }
    }

    public func append(_ input: [UInt8]) throws {
        try input.withUnsafeBufferPointer { try append($0) }
    }

    /// Ends the stream and returns every compressed byte; the stream takes no more input.
    public func finish() throws -> [UInt8] {
        precondition(!finished, "finish called twice")
        finished = true
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        while try run(Z_FINISH) != Z_STREAM_END {}
        let out = output
        output = []
        return out
    }

    /// One `deflate` call into the chunk, its output kept; returns zlib's code.
    private func run(_ flush: Int32) throws -> Int32 {
        stream.pointee.next_out = chunk.baseAddress
        stream.pointee.avail_out = uInt(Self.chunkSize)
        let rc = deflate(stream, flush)
        let produced = Self.chunkSize - Int(stream.pointee.avail_out)
        guard rc == Z_OK || rc == Z_STREAM_END || (rc == Z_BUF_ERROR && produced == 0 && flush == Z_NO_FLUSH) else {
            throw CompressionError.zlib(code: rc, detail: "deflate failed")
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[..<produced]))
        return rc
    }
}
