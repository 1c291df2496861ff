/// Turns an HTTP request body into plain bytes according to its `Content-Encoding`
/// (SPEC §3): identity, gzip, or deflate — where "deflate" may be zlib-wrapped (RFC 1950,
/// what the HTTP spec means) or raw (RFC 1951, what the Microsoft collector convention and
/// many SDK clients actually send). We detect which instead of making clients choose.
public enum ContentDecoding {
    public static func decode(_ body: [UInt8], contentEncoding: String?, limits: Inflate.Limits) throws -> [UInt8] {
        let encoding = (contentEncoding ?? "identity").trimmingSpaces().lowercased()
        switch encoding {
        case "", "identity":
            return body
        case "gzip", "x-gzip":
            return try Inflate.decompress(body, format: .gzip, limits: limits)
        case "deflate":
            return try decodeDeflate(body, limits: limits)
        default:
            throw CompressionError.unsupportedEncoding(encoding)
        }
    }

    /// zlib-wrapped when the header says so, else raw; a "zlib" stream that fails as zlib
    /// is retried as raw in case the header match was a coincidence.
    static func decodeDeflate(_ body: [UInt8], limits: Inflate.Limits) throws -> [UInt8] {
        guard body.count >= 2, ZlibFormat.looksLikeZlibHeader(body[0], body[1]) else {
            return try Inflate.decompress(body, format: .raw, limits: limits)
        }
        do {
            return try Inflate.decompress(body, format: .zlib, limits: limits)
        } catch CompressionError.corrupt(let format, let detail) {
            do {
                return try Inflate.decompress(body, format: .raw, limits: limits)
            } catch {
                throw CompressionError.corrupt(format: format, detail: detail)
            }
        }
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
