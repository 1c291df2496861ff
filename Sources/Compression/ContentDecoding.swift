/// Turns an HTTP request body into plain bytes according to its `Content-Encoding`:
/// identity, gzip, or deflate — where "deflate" may be zlib-wrapped (RFC 1950,
/// what the HTTP spec means) or raw (RFC 1951, what the Microsoft collector convention and
/// many SDK clients actually send). We detect which instead of making clients choose.
public enum ContentDecoding {
    /// `reserve` is told the size of each chunk of inflated output before it is kept (see
    /// `Inflate.OutputReservation`); identity bodies produce no new bytes and never call it.
    public static func decode(
        _ body: [UInt8], contentEncoding: String?, limits: Inflate.Limits,
        reserve: Inflate.OutputReservation = { _ in }
    ) throws -> [UInt8] {
        let encoding = (contentEncoding ?? "identity").trimmingSpaces().lowercased()
        switch encoding {
        case "", "identity":
            return body
        case "gzip", "x-gzip":
            return try Inflate.decompress(body, format: .gzip, limits: limits, reserve: reserve)
        case "deflate":
            return try decodeDeflate(body, limits: limits, reserve: reserve)
        default:
            throw CompressionError.unsupportedEncoding(encoding)
        }
    }

    /// zlib-wrapped when the header says so, else raw; a "zlib" stream that fails as zlib
    /// (corrupt, or followed by bytes a zlib stream cannot have) is retried as raw in case
    /// the header match was a coincidence, and the zlib error is reported if raw fails too.
    /// Output of the failed attempt stays reserved until the request ends: over-counting a
    /// rare case is safe, under-counting would not be.
    static func decodeDeflate(_ body: [UInt8], limits: Inflate.Limits, reserve: Inflate.OutputReservation) throws -> [UInt8] {
        guard body.count >= 2, ZlibFormat.looksLikeZlibHeader(body[0], body[1]) else {
            return try Inflate.decompress(body, format: .raw, limits: limits, reserve: reserve)
        }
        do {
            return try Inflate.decompress(body, format: .zlib, limits: limits, reserve: reserve)
        } catch let zlibError as CompressionError {
            switch zlibError {
            case .corrupt, .trailingData:
                do {
                    return try Inflate.decompress(body, format: .raw, limits: limits, reserve: reserve)
                } catch is CompressionError {
                    throw zlibError
                }
            default:
                throw zlibError
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
