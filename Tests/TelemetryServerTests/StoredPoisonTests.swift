import Foundation
import StoreCore
import TelemetryModel
import TelemetryStore
import TestSupport
import Testing

@testable import TelemetryServer

/// Readers survive any value that was ever stored: records as an older version kept them
/// (`StoredPoison`: a status code of Int64.min, durations of 1e19, ±infinity, NaN and -1,
/// JSON numbers past a double's range, lone surrogates, duplicate members, times at Int64's
/// ends) are planted in the store directly, past ingest, and read through every reader as a
/// privacy-cleared caller and as a `read`+`bundle` one. Every answer parses, and the JSON
/// they hold is the repaired form (Foundation refuses 1e400 and lone surrogates).
@Suite(.serialized) struct StoredPoisonTests {
    @Test func everyReaderAnswersWithParseableRecordsForWhatAnOlderVersionStored() async throws {
        try await IngestHarness.run { h in
            let now = h.components.clock.nowMilliseconds()
            // Inside the last whole hour, so stats read them from the rollups as well as from records.
            let t = EventRollupScope.hour(of: now) - 30 * 60_000
            let incident = Incident(
                id: IncidentID.random().value, guid: UUID().uuidString.lowercased(), env: .prod, appId: StoredPoison.app,
                deviceId: StoredPoison.device, sessionId: nil, identity: nil, description: "poison", createdAt: now, recordCount: 3,
                firstTime: t + 10, lastTime: t + 12)
            let store = h.components.store
            _ = try await store.append(StoredPoison.events(around: t), kind: .event, env: .prod, receivedAt: now, incident: nil)
            _ = try await store.append(
                StoredPoison.logs(around: t, incident: incident.id), kind: .log, env: .prod, receivedAt: now, incident: incident)
            let (_, reader) = try await h.components.tokens.create(name: "engineer", scopes: [.read, .bundle], apps: [], now: 0)

            for (token, pii) in [(h.adminToken, true), (reader, false)] {
                let read = try await EveryReader(h: h, token: token, piiAllowed: pii).read(
                    device: StoredPoison.device, incident: incident.id, since: now - 30 * 3_600_000, until: now)
                #expect(read.events.count == StoredPoison.eventsInWindow)
                #expect(read.logs.count == 3)
                for (name, members) in read.bundles {
                    let telemetry = EveryReader.lines(Array((members["telemetry.ndjson"] ?? "").utf8), in: name)
                    let logs = EveryReader.lines(Array((members["logs.ndjson"] ?? "").utf8), in: name)
                    // An incident's bundle is its device's story around the upload: the same events.
                    #expect(telemetry.count == StoredPoison.eventsInWindow, "\(name)")
                    #expect(logs.count == 3, "\(name)")
                    if !name.hasSuffix("incident") {
                        let timeline = members["timeline.txt"] ?? ""
                        #expect(timeline.contains("inf ms") && timeline.contains("1e+19 ms") && timeline.contains("nan ms"), "\(timeline)")
                    }
                }
                guard pii else { continue }
                // The privacy-cleared caller sees the records as stored, repaired where JSON readers choke.
                let data = read.events.compactMap { $0["data"] as? [String: Any] }
                #expect(
                    data.contains { $0["durationMs"] as? String == "1e400" && ($0["statusCode"] as? NSNumber)?.int64Value == Int64.min })
                #expect(data.contains { ($0["errorString"] as? String) == "bad \u{FFFD} text \u{FFFD}" })
                #expect(read.events.contains { $0["big"] as? String == "123e999999999" })
                #expect(read.logs.contains { $0["message"] as? String == "lone \u{FFFD} and \u{FFFD}" && $0["n"] as? String == "1e400" })
                #expect(read.logs.contains { $0["message"] as? String == "pair 😀 kept" })
            }
            // A rebuild of the rollups reads every stored key again, the ones at Int64's ends included.
            let rebuilt = try await store.rebuildRollups(env: .prod)
            #expect(rebuilt.records == StoredPoison.events(around: t).count)
        }
    }
}
