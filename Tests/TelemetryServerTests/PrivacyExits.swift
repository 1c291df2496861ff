import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Synchronization
import Systemd
import Testing

/// Everything one caller reads through every exit of the daemon, as decoded text: the
/// strings of every JSON answer (member names and values, escapes resolved), the lines of
/// every text answer, and what could not be parsed.
struct ExitReading {
    /// (where, text) for every decoded string and text line.
    var texts: [(exit: String, text: String)] = []
    /// Answers that did not parse, by exit.
    var unparsable: [String] = []
    /// Records found per exit (`query.logs`, `bundle.zip.logs.ndjson`, ...).
    var counts: [String: Int] = [:]

    /// Where each of `cores` (lower-cased) was found.
    func findings(_ cores: Set<String>) -> [String] {
        var found: [String] = []
        for (exit, text) in texts {
            let lower = text.lowercased()
            for core in cores where lower.contains(core.lowercased()) { found.append("\(core) in \(exit): \(text.prefix(300))") }
        }
        return found
    }

    /// Which of `cores` were seen anywhere.
    func seen(_ cores: Set<String>) -> Set<String> {
        let all = texts.map { $0.text.lowercased() }.joined(separator: "\n")
        return cores.filter { all.contains($0.lowercased()) }
    }

    mutating func addJSON(_ bytes: [UInt8], exit: String) {
        guard let value = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) else {
            unparsable.append("\(exit): \(String(decoding: bytes.prefix(300), as: UTF8.self))")
            return
        }
        for s in Self.strings(value) { texts.append((exit, s)) }
    }

    /// Every line parses; returns how many records it held.
    @discardableResult
    mutating func addNDJSON(_ bytes: [UInt8], exit: String) -> Int {
        var n = 0
        for line in bytes.split(separator: 0x0A) where !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D }) {
            addJSON(Array(line), exit: exit)
            n += 1
        }
        return n
    }

    mutating func addText(_ text: String, exit: String) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) { texts.append((exit, String(line))) }
    }

    static func strings(_ value: Any) -> [String] {
        switch value {
        case let s as String: return [s]
        case let o as [String: Any]: return o.flatMap { [$0.key] + strings($0.value) }
        case let a as [Any]: return a.flatMap(strings)
        default: return []
        }
    }
}

/// Reads every exit a caller holding `token` (and `bundleToken` for bundles) may use.
struct ExitReader {
    let h: IngestHarness
    let token: String
    let bundleToken: String
    let app: String
    var reading = ExitReading()

    func get(_ uri: String, token: String? = nil, accept: String = "application/json") async throws -> (HTTPResponse.Status, [UInt8]) {
        try await h.client.execute(
            uri: uri, method: .get, headers: [.authorization: "Bearer \(token ?? self.token)", .accept: accept]
        ) { ($0.status, [UInt8](buffer: $0.body)) }
    }

    mutating func json(_ uri: String, exit: String) async throws -> [String: Any] {
        let (status, body) = try await get(uri)
        #expect(status == .ok, "\(uri): \(String(decoding: body.prefix(300), as: UTF8.self))")
        reading.addJSON(body, exit: exit)
        return (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:]
    }

    /// Query answers (JSON and NDJSON), stats, incidents, metrics and bundles.
    mutating func readAll(incidents: [String]) async throws {
        for (kind, member) in [("events", "events"), ("logs", "logs")] {
            let page = try await json("/v1/\(kind)?limit=10000&order=asc&app=\(app)", exit: "query.\(kind)")
            reading.counts["query.\(kind)"] = (page[member] as? [Any])?.count
            let (status, body) = try await get("/v1/\(kind)?limit=10000&order=asc&app=\(app)", accept: "application/x-ndjson")
            #expect(status == .ok)
            reading.counts["ndjson.\(kind)"] = reading.addNDJSON(body, exit: "ndjson.\(kind)")
        }
        for stats in ["enrollment", "launches", "actions", "drops"] {
            _ = try await json("/v1/stats/\(stats)?since=-2h", exit: "stats.\(stats)")
        }
        for id in incidents { _ = try await json("/v1/incidents/\(id)", exit: "incident") }
        let (status, metrics) = try await get("/metrics", accept: "text/plain")
        #expect(status == .ok)
        reading.addText(String(decoding: metrics, as: UTF8.self), exit: "metrics")

        for format in ["zip", "tar.gz"] {
            let members = try await bundle("/v1/bundles?app=\(app)&since=-2h&format=\(format)", format: format)
            reading.counts["bundle.\(format).events"] = members.events
            reading.counts["bundle.\(format).logs"] = members.logs
        }
        for id in incidents { _ = try await bundle("/v1/incidents/\(id)/bundle", format: "zip") }
    }

    /// Downloads and unpacks a bundle (with the system's unzip/tar), reading every member.
    mutating func bundle(_ uri: String, format: String) async throws -> (events: Int, logs: Int) {
        let (status, bytes) = try await get(uri, token: bundleToken, accept: "*/*")
        #expect(status == .ok, "\(uri): \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("privacy-bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let archive = dir.appendingPathComponent("b.\(format)")
        try Data(bytes).write(to: archive)
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: format == "zip" ? "/usr/bin/unzip" : "/usr/bin/tar")
        tool.arguments = format == "zip" ? ["-q", archive.path, "-d", dir.path] : ["xzf", archive.path, "-C", dir.path]
        try tool.run()
        tool.waitUntilExit()
        #expect(tool.terminationStatus == 0, "\(uri) does not unpack")
        var counts = (events: 0, logs: 0)
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.path) where name != archive.lastPathComponent {
            let data = [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
            let exit = "bundle \(uri) \(name)"
            if name.hasSuffix(".ndjson") {
                let n = reading.addNDJSON(data, exit: exit)
                if name == "telemetry.ndjson" { counts.events = n } else if name == "logs.ndjson" { counts.logs = n }
            } else if name.hasSuffix(".json") {
                reading.addJSON(data, exit: exit)
            } else {
                reading.addText(String(decoding: data, as: UTF8.self), exit: exit)
            }
        }
        return counts
    }

    /// A follow stream's backlog and one record committed while it is open: every line
    /// parses, and the stream carries `expected` records plus the live one.
    mutating func follow(port: Int, serverSentEvents: Bool, expected: Int, live: () async throws -> Void) async throws {
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            try await readFollow(client, port: port, serverSentEvents: serverSentEvents, expected: expected, live: live)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    private mutating func readFollow(
        _ client: HTTPClient, port: Int, serverSentEvents: Bool, expected: Int, live: () async throws -> Void
    ) async throws {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/v1/logs?follow=true&limit=1000&app=\(app)")
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        request.headers.add(name: "Accept", value: serverSentEvents ? "text/event-stream" : "application/x-ndjson")
        let response = try await client.execute(request, timeout: .seconds(60))
        #expect(response.status == .ok)
        var buffer: [UInt8] = []
        var records = 0
        var sentLive = false
        let want = min(expected, 1000) + 1
        var iterator = response.body.makeAsyncIterator()
        while records < want, let chunk = try await iterator.next() {
            buffer.append(contentsOf: chunk.readableBytesView)
            records = Self.lines(buffer, serverSentEvents: serverSentEvents).count
            if !sentLive, records >= want - 1 {
                sentLive = true
                try await live()
            }
        }
        let exit = serverSentEvents ? "follow.sse" : "follow.ndjson"
        let lines = Self.lines(buffer, serverSentEvents: serverSentEvents)
        for line in lines { reading.addJSON(Array(line.utf8), exit: exit) }
        reading.counts[exit] = lines.count
    }

    /// The record lines of a follow stream (heartbeats and SSE framing left out).
    static func lines(_ buffer: [UInt8], serverSentEvents: Bool) -> [String] {
        let text = String(decoding: buffer, as: UTF8.self)
        let complete = text.hasSuffix("\n") ? text : String(text[..<(text.lastIndex(of: "\n") ?? text.startIndex)])
        return complete.split(separator: "\n").compactMap { raw -> String? in
            let line = raw.trimmingCharacters(in: .whitespaces)
            if serverSentEvents {
                guard line.hasPrefix("data:") else { return nil }
                let payload = line.dropFirst(5).trimmingCharacters(in: .whitespaces)
                return payload.hasPrefix("{") ? payload : nil
            }
            return line.hasPrefix("{") ? line : nil
        }
    }
}

/// A journal sink that keeps every entry: the journal mirror's output, read like an exit.
final class CapturingJournalSink: JournalSink {
    private let stored = Mutex<[JournalEntry]>([])
    var entries: [JournalEntry] { stored.withLock { $0 } }

    func send(_ entry: JournalEntry) -> Int32 {
        stored.withLock { $0.append(entry) }
        return 0
    }
}
