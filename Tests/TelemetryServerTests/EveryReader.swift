import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Privacy
import StoreCore
import TelemetryModel
import TelemetryStore
import Testing

@testable import TelemetryServer

/// Reads one device's records back through every reader the daemon has, as one caller: the
/// query API as JSON and NDJSON, a `follow=true` stream's backlog, every stats answer from
/// rollups and from records, an incident, and bundles as zip and tar.gz (every member).
/// Every answer must be a 200 that parses (JSON with Foundation, NDJSON line by line, archives
/// with the system's unzip and tar); what was read is returned for the caller's own checks.
struct EveryReader {
    let h: IngestHarness
    let token: String
    let piiAllowed: Bool

    struct Readings {
        var events: [[String: Any]] = []
        var logs: [[String: Any]] = []
        /// Per archive read (`zip device`, `tar.gz incident`...), its members' text.
        var bundles: [String: [String: String]] = [:]
    }

    /// Reads the records of `since...until` (and the stats of that window).
    func read(device: String, incident: String?, since: Int64, until: Int64) async throws -> Readings {
        var out = Readings()
        // As RFC 3339: a negative epoch count would read as a relative time (`-2h`).
        let window = "since=\(Timestamp.format(milliseconds: since))&until=\(Timestamp.format(milliseconds: until))"
        for (kind, member) in [("events", "events"), ("logs", "logs")] {
            let uri = "/v1/\(kind)?device=\(device)&\(window)&limit=10000&order=asc"
            let page = try await json(uri)
            let records = page[member] as? [[String: Any]] ?? []
            let lines = try await ndjson(uri)
            #expect(lines.count == records.count, "\(uri): NDJSON and JSON pages differ")
            let followed = try await followBacklog(kind: kind == "events" ? .event : .log, device: device, since: since, until: until)
            #expect(followed.count == min(records.count, 1000), "\(uri): the follow backlog differs")
            if kind == "events" { out.events = records } else { out.logs = records }
        }
        for what in ["enrollment", "launches", "actions"] {
            for source in ["rollups", "records"] {
                for interval in ["1h", "1d", "15m"] {
                    _ = try await json("/v1/stats/\(what)?\(window)&source=\(source)&interval=\(interval)")
                }
            }
        }
        var archives = [("/v1/bundles?device=\(device)&\(window)", "device")]
        if let incident {
            _ = try await json("/v1/incidents/\(incident)")
            archives.append(("/v1/incidents/\(incident)/bundle?", "incident"))
        }
        for (uri, scope) in archives {
            for format in ["zip", "tar.gz"] {
                out.bundles["\(format) \(scope)"] = try await bundle(uri + "&format=\(format)", format: format)
            }
        }
        return out
    }

    func get(_ uri: String, accept: String? = nil) async throws -> (HTTPResponse.Status, [UInt8]) {
        var headers: HTTPFields = [.authorization: "Bearer \(token)"]
        if let accept { headers[.accept] = accept }
        return try await h.client.execute(uri: uri, method: .get, headers: headers) { r in (r.status, Array(buffer: r.body)) }
    }

    func json(_ uri: String) async throws -> [String: Any] {
        let (status, body) = try await get(uri)
        #expect(status == .ok, "\(uri): \(String(decoding: body, as: UTF8.self))")
        let parsed = try? JSONSerialization.jsonObject(with: Data(body))
        #expect(parsed is [String: Any], "\(uri) does not parse: \(String(decoding: body.prefix(300), as: UTF8.self))")
        return parsed as? [String: Any] ?? [:]
    }

    func ndjson(_ uri: String) async throws -> [[String: Any]] {
        let (status, body) = try await get(uri, accept: "application/x-ndjson")
        #expect(status == .ok, "\(uri) as NDJSON: \(String(decoding: body, as: UTF8.self))")
        return Self.lines(body, in: "\(uri) as NDJSON")
    }

    static func lines(_ body: [UInt8], in place: String) -> [[String: Any]] {
        body.split(separator: 0x0A).compactMap { line in
            let parsed = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any]
            #expect(parsed != nil, "a line of \(place) does not parse: \(String(decoding: line.prefix(300), as: UTF8.self))")
            return parsed
        }
    }

    /// What `follow=true` sends before it waits for commits: the stream is cut after its first write.
    func followBacklog(kind: RecordKind, device: String, since: Int64, until: Int64) async throws -> [[String: Any]] {
        let visibility = RecordVisibility(piiAllowed: piiAllowed, pseudonymizer: h.components.pseudonymizer)
        var stream = FollowStream(
            store: h.components.store,
            query: RecordQuery(kind: kind, device: device, since: since, until: until, limit: 1000, presenter: visibility),
            serverSentEvents: false, access: nil)
        stream.heartbeat = .milliseconds(50)
        let first = FirstWrite()
        do {
            try await stream.response().body.write(FirstWrite.Writer(box: first))
        } catch is FirstWrite.Cut {}
        return Self.lines(first.bytes, in: "the follow backlog")
    }

    /// Keeps what a response body writes first, then stops the writer.
    final class FirstWrite: @unchecked Sendable {
        var bytes: [UInt8] = []
        struct Cut: Error {}

        struct Writer: ResponseBodyWriter {
            let box: FirstWrite
            mutating func write(_ buffer: ByteBuffer) async throws {
                box.bytes += Array(buffer: buffer)
                throw Cut()
            }
            consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
        }
    }

    /// A bundle's members, each checked by its kind: JSON parses, NDJSON parses line by line,
    /// the timeline is not empty.
    func bundle(_ uri: String, format: String) async throws -> [String: String] {
        let (status, body) = try await get(uri)
        #expect(status == .ok && !body.isEmpty, "\(uri): \(status) \(String(decoding: body.prefix(300), as: UTF8.self))")
        let members = try Self.extract(body, format: format)
        for required in ["manifest.json", "summary.json", "timeline.txt", "telemetry.ndjson", "logs.ndjson"] {
            #expect(members[required] != nil, "\(uri) has no \(required): \(members.keys.sorted())")
        }
        for (name, text) in members {
            if name.hasSuffix(".json") {
                #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) != nil, "\(uri) \(name) does not parse")
            } else if name.hasSuffix(".ndjson") {
                _ = Self.lines(Array(text.utf8), in: "\(uri) \(name)")
            } else if name == "timeline.txt" {
                #expect(!text.isEmpty, "\(uri) \(name) is empty")
            }
        }
        return members
    }

    /// The members of an archive, unpacked by the system's own tools.
    static func extract(_ archive: [UInt8], format: String) throws -> [String: String] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("archive")
        try Data(archive).write(to: file)
        let out = dir.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: format == "zip" ? "/usr/bin/unzip" : "/usr/bin/tar")
        process.arguments = format == "zip" ? ["-q", file.path, "-d", out.path] : ["-xzf", file.path, "-C", out.path]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "the \(format) archive does not unpack")
        var members: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: out.path) {
            members[name] = String(decoding: try Data(contentsOf: out.appendingPathComponent(name)), as: UTF8.self)
        }
        return members
    }
}
