/// Why a compressed body or block could not be used. Messages go back to HTTP clients, so
/// each says what was wrong and, for limits, which limit and its value.
public enum CompressionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stream ended before zlib saw its end marker (a cut-off upload).
    case truncated(format: String)
    /// The bytes are not valid data of the declared format.
    case corrupt(format: String, detail: String)
    /// Bytes follow the end of the stream that are not part of it (for gzip: not another
    /// member). Refused rather than ignored: they may be data the client believes was sent.
    case trailingData(format: String, bytes: Int)
    /// Inflating would exceed the decompressed-size limit (a zlib bomb, or just too big).
    case outputLimit(limit: Int)
    /// The decompressed/compressed ratio is beyond what real telemetry produces.
    case ratioLimit(limit: Int)
    case unsupportedEncoding(String)
    /// zlib itself failed (out of memory, bad parameters).
    case zlib(code: Int32, detail: String)

    public var description: String {
        switch self {
        case .truncated(let f): "\(f) stream is truncated: it ends before the end-of-stream marker"
        case .corrupt(let f, let d): "body is not valid \(f) data (\(d))"
        case .trailingData(let f, let n):
            "\(f) stream is followed by \(n) bytes of trailing data that are not part of it; send one stream (gzip may hold several complete members)"
        case .outputLimit(let l): "decompressed body exceeds the limit maxDecompressedBytes=\(l)"
        case .ratioLimit(let l): "decompression ratio exceeds the limit maxCompressionRatio=\(l) (likely a zlib bomb)"
        case .unsupportedEncoding(let e): "Content-Encoding '\(e)' is not supported; use identity, gzip or deflate"
        case .zlib(let code, let d): "zlib error \(code): \(d)"
        }
    }
}
