public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Whether the client gzips its request bodies and asks for gzipped answers.
///
/// Over a network gzip saves bandwidth; to a ClickHouse on the same host it only spends CPU
/// on both sides of the loopback, and there the collector and ClickHouse share the cores
/// (issue 26 measured the read path spending a tenth of the collector's CPU inflating
/// answers). `auto`, the default, therefore compresses to every endpoint except a loopback
/// address.
public enum ClickHouseWireCompression: String, Sendable, Hashable, CaseIterable {
    /// gzip, except to an endpoint whose host is a loopback address or `localhost`.
    case auto
    /// gzip to every endpoint.
    case gzip
    /// Plain bodies and answers to every endpoint.
    case none

    /// Whether requests to `endpoint` are compressed.
    public func compresses(_ endpoint: URL) -> Bool {
        switch self {
        case .gzip: true
        case .none: false
        case .auto: !Self.isLoopback(host: endpoint.host ?? "")
        }
    }

    /// A loopback address (127.0.0.0/8, ::1, an IPv4-mapped 127.x) or the name `localhost`.
    /// Only literal addresses and that one name count: a name such as `127.0.0.1.example.com`
    /// may resolve anywhere, so it is compressed like any remote host.
    static func isLoopback(host raw: String) -> Bool {
        var host = raw.lowercased()
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.hasSuffix(".") { host.removeLast() }
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
            // ::ffff:127.x.y.z
            return bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
        }
        return false
    }
}
