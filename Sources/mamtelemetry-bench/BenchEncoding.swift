import ArgumentParser
import Compression

/// The `Content-Encoding` of the generated bodies, produced by the package's own zlib
/// wrapper at level 6 (what the SDKs use): `deflate` is the zlib format, `gzip` one member.
enum BenchEncoding: String, ExpressibleByArgument, Sendable {
    case identity, gzip, deflate

    var header: String? { self == .identity ? nil : rawValue }

    /// `raw` as it goes on the wire. zlib fails only without memory or on bad parameters,
    /// neither of which a load generator can work around, so a failure stops the run.
    func encoded(_ raw: [UInt8]) -> [UInt8] {
        let format: ZlibFormat
        switch self {
        case .identity: return raw
        case .deflate: format = .zlib
        case .gzip: format = .gzip
        }
        do {
            return try Deflate.compress(raw, level: 6, format: format)
        } catch {
            fatalError("\(rawValue) encoding failed: \(error)")
        }
    }
}
