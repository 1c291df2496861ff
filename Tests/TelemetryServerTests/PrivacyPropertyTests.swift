import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import OTLP
import SwiftProtobuf
import Systemd
import TelemetryModel
import TelemetryStore
import Testing

@testable import TelemetryServer

/// The privacy property, proved by generated input (issue 23): records with e-mail addresses,
/// identities, credentials and verbose-only markers planted at random places and in random
/// spellings go in through every ingest route (NDJSON, JSON array, text/plain, diagnostics,
/// OTLP protobuf and JSON, gzip and deflate bodies); then everything is read back through
/// every exit — query JSON and NDJSON, follow (NDJSON and server-sent events, backlog and a
/// live record), incidents, zip and tar.gz bundles unpacked, stats, `/metrics`, and the
/// journal mirror's entries. Every answer parses, nothing accepted is lost, a caller without
/// `pii` sees no planted secret anywhere, and a `pii` caller sees the personal data and no
/// credential.
///
/// Seeded and bounded for CI (about 150 records); `PRIVACY_PROPERTY_SCALE=20` makes each
/// round 20 times larger and `PRIVACY_PROPERTY_SEED` replays a seed.
@Suite(.serialized) struct PrivacyPropertyTests {
    static var scale: Int { max(1, Int(ProcessInfo.processInfo.environment["PRIVACY_PROPERTY_SCALE"] ?? "") ?? 1) }
    static var seed: UInt64 { UInt64(ProcessInfo.processInfo.environment["PRIVACY_PROPERTY_SEED"] ?? "") ?? 23 }

    /// What one round posted.
    struct Posted {
        var records: PrivacyRecords
        var incidents: [String] = []
        var acceptedEvents = 0
        var acceptedLogs = 0
    }

    @Test func nothingPlantedReachesAnExitItShouldNot() async throws {
        let sink = CapturingJournalSink()
        let mirrored: @Sendable (DaemonComponents, Logger) -> ApplicationHooks = { components, logger in
            let mirror = JournalMirror(
                configuration: JournalMirrorConfiguration(components.configuration), sink: sink, logger: logger,
                metricsFactory: components.metrics.factory, clock: components.clock, initiallyReachable: true)
            var hooks = ApplicationHooks()
            hooks.mirror = JournalLogMirror(mirror: mirror, pseudonymizer: components.pseudonymizer)
            hooks.services = [mirror]
            return hooks
        }
        let adjust: @Sendable (inout ServerConfiguration) -> Void = { $0.journalMirror = true }
        try await IngestHarness.run(live: true, adjust: adjust, hooks: mirrored) { h in
            let tokens = h.components.tokens
            let (_, read) = try await tokens.create(name: "reader", scopes: [.read], apps: [], now: 0)
            let (_, bundle) = try await tokens.create(name: "support", scopes: [.bundle], apps: [], now: 0)
            let (_, readPII) = try await tokens.create(name: "reader-pii", scopes: [.read, .pii], apps: [], now: 0)
            let (_, bundlePII) = try await tokens.create(name: "support-pii", scopes: [.bundle, .pii], apps: [], now: 0)

            var posted = try await Self.post(h, seed: Self.seed)
            #expect(
                posted.acceptedEvents == posted.records.events && posted.acceptedLogs == posted.records.logs, "every record is accepted")

            for (token, bundleToken, pii) in [(read, bundle, false), (readPII, bundlePII, true)] {
                let who = pii ? "a pii caller" : "a caller without pii"
                var reader = ExitReader(h: h, token: token, bundleToken: bundleToken, app: PrivacyRecords.app)
                let logsRead = posted.acceptedLogs
                try await reader.readAll(incidents: posted.incidents)
                var followed: [String: Int] = [:]
                for serverSentEvents in [false, true] {
                    followed[serverSentEvents ? "follow.sse" : "follow.ndjson"] = min(posted.acceptedLogs, 1000) + 1
                    try await reader.follow(
                        port: try #require(h.client.port), serverSentEvents: serverSentEvents, expected: posted.acceptedLogs
                    ) {
                        // A record committed while the stream is open reaches it live.
                        let answer = try await h.post("/v1/logs", posted.records.logRecord())
                        #expect(answer.accepted == 1)
                        posted.acceptedLogs += 1
                    }
                }
                let r = reader.reading
                #expect(r.unparsable.isEmpty, "\(r.unparsable.prefix(5))")
                // Nothing accepted is lost, on any exit.
                for exit in ["query.events", "ndjson.events", "bundle.zip.events", "bundle.tar.gz.events"] {
                    #expect(r.counts[exit] == posted.acceptedEvents, "\(exit)")
                }
                for exit in ["query.logs", "ndjson.logs", "bundle.zip.logs", "bundle.tar.gz.logs"] {
                    #expect(r.counts[exit] == logsRead, "\(exit)")
                }
                for (exit, n) in followed { #expect(r.counts[exit] == n, "\(exit)") }

                let planted = posted.records.g.planted
                let personal = planted.personal.union(planted.markers)
                #expect(
                    r.findings(planted.credentials).isEmpty, "credentials shown to \(who): \(r.findings(planted.credentials).prefix(5))")
                if pii {
                    // Personal data and verbose text as stored: every planted item is somewhere.
                    let missing = personal.subtracting(r.seen(personal))
                    #expect(missing.isEmpty, "\(who) is not shown \(missing.prefix(5))")
                } else {
                    #expect(r.findings(personal).isEmpty, "shown to \(who): \(r.findings(personal).prefix(5))")
                }
            }

            // The journal mirror writes, by default, what a caller without `pii` may see.
            #expect(await Self.eventually { sink.entries.count == posted.acceptedLogs }, "every accepted log record is mirrored")
            var journal = ExitReading()
            for entry in sink.entries {
                for field in entry.fields { journal.texts.append(("journal \(field.name)", String(decoding: field.value, as: UTF8.self))) }
            }
            let planted = posted.records.g.planted
            let everything = planted.credentials.union(planted.personal).union(planted.markers)
            #expect(journal.findings(everything).isEmpty, "in the journal: \(journal.findings(everything).prefix(5))")
        }
    }

    /// Posts one round of records through every ingest route.
    static func post(_ h: IngestHarness, seed: UInt64) async throws -> Posted {
        var posted = Posted(records: PrivacyRecords(seed: seed))
        for _ in 0..<(4 * scale) {
            // Telemetry: NDJSON and a JSON array.
            let ndjson = (0..<6).map { _ in posted.records.event() }.joined(separator: "\n")
            posted.acceptedEvents += try await send(h, "/v1/telemetry", Array(ndjson.utf8), "application/x-ndjson", &posted.records)
            let array = "[" + (0..<6).map { _ in posted.records.event() }.joined(separator: ",") + "]"
            posted.acceptedEvents += try await send(h, "/v1/telemetry", Array(array.utf8), "application/json", &posted.records)
            // Logs: NDJSON and a console text export.
            let logs = (0..<6).map { _ in posted.records.logRecord() }.joined(separator: "\n")
            posted.acceptedLogs += try await send(h, "/v1/logs", Array(logs.utf8), "application/x-ndjson", &posted.records)
            let text = (0..<4).map { _ in posted.records.textLine() }.joined(separator: "\n")
            posted.acceptedLogs += try await send(
                h, "/v1/logs?app=\(PrivacyRecords.app)&device=dev-text", Array(text.utf8), "text/plain", &posted.records)
            // A diagnostic upload: an incident.
            let before = posted.records.logs
            let upload = posted.records.diagnostic()
            var headers: HTTPFields = [.contentType: "application/json", .authorization: "Bearer \(h.adminToken)"]
            let body = try posted.records.encode(Array(upload.utf8), headers: &headers)
            let answer = try await h.client.execute(uri: "/v1/diagnostics", method: .post, headers: headers, body: ByteBuffer(bytes: body))
            {
                ($0.status, (try? JSONSerialization.jsonObject(with: Data(buffer: $0.body)) as? [String: Any]) ?? [:])
            }
            #expect(answer.0 == .created || answer.0 == .ok, "\(answer.1)")
            posted.acceptedLogs += answer.1["accepted"] as? Int ?? 0
            #expect(answer.1["accepted"] as? Int == posted.records.logs - before)
            if let id = (answer.1["incident"] as? [String: Any])?["id"] as? String { posted.incidents.append(id) }
            // OTLP, protobuf and JSON (its addresses sometimes spelled with \u0040).
            for json in [false, true] {
                let logsBefore = posted.records.logs
                let request = posted.records.otlpRequest()
                var bytes: [UInt8]
                if json {
                    var text = try request.jsonString()
                    if posted.records.g.chance(0.5) { text = text.replacingOccurrences(of: "@", with: "\\u0040") }
                    bytes = Array(text.utf8)
                } else {
                    bytes = try request.serializedBytes()
                }
                var headers: HTTPFields = [
                    .contentType: json ? "application/json" : "application/x-protobuf", .authorization: "Bearer \(h.adminToken)",
                ]
                bytes = try posted.records.encode(bytes, headers: &headers)
                let status = try await h.client.execute(uri: "/v1/logs", method: .post, headers: headers, body: ByteBuffer(bytes: bytes)) {
                    $0.status
                }
                #expect(status == .ok)
                posted.acceptedLogs += posted.records.logs - logsBefore
            }
        }
        return posted
    }

    /// Posts `body` (compressed at random) and returns how many records the answer accepted;
    /// nothing may be rejected.
    static func send(
        _ h: IngestHarness, _ uri: String, _ body: [UInt8], _ contentType: String, _ records: inout PrivacyRecords
    ) async throws -> Int {
        var headers: HTTPFields = [.contentType: contentType, .authorization: "Bearer \(h.adminToken)"]
        let bytes = try records.encode(body, headers: &headers)
        let answer = try await h.client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(bytes: bytes)) {
            IngestHarness.Answer(status: $0.status, headers: $0.headers, body: String(buffer: $0.body))
        }
        #expect(answer.status == .ok, "\(uri): \(answer.body)")
        #expect(answer.rejectedLines.isEmpty, "\(uri): \(answer.body)")
        return answer.accepted ?? 0
    }

    static func eventually(timeout: Duration = .seconds(20), _ condition: () -> Bool) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now + timeout
        while clock.now < end {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }
}
