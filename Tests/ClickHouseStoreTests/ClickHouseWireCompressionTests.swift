import Foundation
import TestSupport
import Testing

@testable import ClickHouseStore

/// gzip on the wire to ClickHouse: which endpoints `auto` spares, and both wire forms
/// understood by a real server.
@Suite struct ClickHouseWireCompressionTests {
    /// Loopback literals in every spelling a URL may carry them, and names or addresses that
    /// only look like one (a name may resolve anywhere, so it is compressed).
    @Test func autoSparesOnlyLoopbackEndpoints() throws {
        let loopback = [
            "http://127.0.0.1:8123", "http://127.9.8.7:8123", "http://localhost:8123", "http://LocalHost:8123",
            "http://localhost.:8123", "http://[::1]:8123", "http://[0:0:0:0:0:0:0:1]:8123", "https://[::ffff:127.0.0.1]:8443",
            "http://127.0.0.1",
        ]
        let remote = [
            "http://10.0.0.1:8123", "http://128.0.0.1:8123", "http://126.255.255.255:8123", "http://127.0.0.1.nip.io:8123",
            "http://localhost.example.com:8123", "http://mylocalhost:8123", "http://[::2]:8123", "http://[::ffff:10.0.0.1]:8123",
            "http://clickhouse:8123", "http://0.0.0.0:8123",
        ]
        for text in loopback {
            let url = try #require(URL(string: text))
            #expect(!ClickHouseWireCompression.auto.compresses(url), "\(text) is loopback")
            #expect(ClickHouseWireCompression.gzip.compresses(url))
        }
        for text in remote {
            let url = try #require(URL(string: text))
            #expect(ClickHouseWireCompression.auto.compresses(url), "\(text) is not loopback")
            #expect(!ClickHouseWireCompression.none.compresses(url))
        }
    }

    /// The same insert and select with each mode forced, against a private ClickHouse: the
    /// server reads a gzipped body and the client inflates a gzipped answer, or both stay plain.
    @Test(.enabled(if: PrivateClickHouse.isInstalled)) func bothWireFormsRoundTripThroughARealServer() async throws {
        let server = try PrivateClickHouse()
        defer { server.destroy() }
        for mode in ClickHouseWireCompression.allCases {
            let client = ClickHouseClient(configuration: .init(endpoints: server.urls, compression: mode))
            let table = "wire_\(mode.rawValue)"
            _ = try await client.execute("CREATE TABLE \(identifier: table) (n UInt32, s String) ENGINE = Memory")
            // Large and repetitive, so a gzipped answer is far smaller than the plain one.
            let rows = (0..<20_000).map { "\($0)\ttext \($0 % 7) \(String(repeating: "x", count: 40))\n" }.joined()
            try await client.insert(into: table, database: "default", format: "TabSeparated", rows: Array(rows.utf8))
            let answer = try await client.execute("SELECT n, s FROM \(identifier: table) ORDER BY n FORMAT TabSeparated")
            #expect(answer == Array(rows.utf8), "\(mode): the rows came back changed")
            try await client.shutdown()
        }
    }
}
