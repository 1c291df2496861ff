import AsyncHTTPClient
import Foundation
import NIOCore

/// Reads a ClickHouse server the way an auditor would, beside the daemon rather than through
/// it: plain SQL over HTTP, for tests that check what actually landed there.
public struct ClickHouseInspector: Sendable {
    public let url: URL

    public init(url: URL) { self.url = url }

    /// Runs one statement and returns the answer text; throws with ClickHouse's message.
    public func query(_ sql: String) async throws -> String {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.body = .bytes(ByteBuffer(string: sql))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        let text = String(buffer: try await response.body.collect(upTo: 256 << 20))
        guard response.status == .ok else { throw PrivateClickHouse.Failure(message: text) }
        return text
    }

    /// Polls `sql` until it answers `expected` or `timeout` passes; returns the last answer
    /// (an unreachable server counts as a wrong answer, so it works across an outage).
    public func eventually(_ sql: String, _ expected: String, timeout: Duration = .seconds(60)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var last = ""
        while true {
            do { last = try await query(sql) } catch { last = "\(error)" }
            if last == expected || ContinuousClock.now >= deadline { return last }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Every table of every database except `system`, as `database.table`.
    /// `system` is left out because its `processes` and `query_log` hold the text of the
    /// searching query itself; the daemon never writes there.
    /// `databases` limits the list to those (a server shared by many tests).
    public func userTables(databases: [String]? = nil) async throws -> [String] {
        let tables = try await query(
            "SELECT database, name FROM system.tables WHERE database != 'system' ORDER BY database, name FORMAT TSV"
        )
        .split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        return tables.filter { databases?.contains($0[0]) ?? true }.map { $0.joined(separator: ".") }
    }

    /// The tables (of `userTables(databases:)`) whose rows contain `needle` in any column,
    /// read whole as TSV, so no column type is skipped.
    public func tablesContaining(_ needle: String, databases: [String]? = nil) async throws -> (searched: [String], found: [String]) {
        let tables = try await userTables(databases: databases)
        var found: [String] = []
        for table in tables {
            let parts = table.split(separator: ".", maxSplits: 1)
            let rows = try await query("SELECT * FROM `\(parts[0])`.`\(parts[1])` FORMAT TSV")
            if rows.contains(needle) { found.append(table) }
        }
        return (tables, found)
    }
}
