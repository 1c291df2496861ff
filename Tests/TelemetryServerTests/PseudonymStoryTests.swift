import Foundation
import HTTPTypes
import NIOCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryServer

/// A caller without `pii` names a user by pseudonym and gets the user's whole story, as a
/// `pii` caller gets it by UPN: the same records (the user's own and the identity-less logs of
/// the devices the user used in the window), the same devices, shown redacted. Generated
/// fleets (seeded; `PSEUDONYM_STORY_ROUNDS` and `PSEUDONYM_STORY_SEED` run more locally).
@Suite struct PseudonymStoryTests {
    static var rounds: Int { max(1, Int(ProcessInfo.processInfo.environment["PSEUDONYM_STORY_ROUNDS"] ?? "") ?? 3) }
    static var seed: UInt64 { UInt64(ProcessInfo.processInfo.environment["PSEUDONYM_STORY_SEED"] ?? "") ?? 24 }

    struct Tokens {
        var pii: String
        var read: String
    }

    /// Ingests a generated fleet and makes a `pii` and a plain reader token (both may bundle).
    static func load(_ h: IngestHarness, seed: UInt64) async throws -> (StoryFleet, Tokens) {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let fleet = StoryFleet(seed: seed, start: now / 3_600_000 * 3_600_000 - 8 * 3_600_000, records: 400)
        for (route, kind) in [("/v1/telemetry", RecordKind.event), ("/v1/logs", .log)] {
            let answer = try await h.post(route, fleet.body(kind))
            #expect(answer.status == .ok && answer.accepted == fleet.records.filter { $0.kind == kind }.count, "\(answer.body)")
        }
        let tokens = h.components.tokens
        let pii = try await tokens.create(name: "privacy-cleared", scopes: [.read, .bundle, .pii], apps: [], now: 0).secret
        let read = try await tokens.create(name: "support", scopes: [.read, .bundle], apps: [], now: 0).secret
        return (fleet, Tokens(pii: pii, read: read))
    }

    static func get(_ h: IngestHarness, _ uri: String, token: String) async throws -> IngestHarness.Answer {
        try await h.client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"]) { r in
            IngestHarness.Answer(status: r.status, headers: r.headers, body: String(buffer: r.body))
        }
    }

    static func leaks(_ text: String, _ fleet: StoryFleet) -> [String] {
        let lower = text.lowercased()
        return fleet.hidden.filter { lower.contains($0) }.sorted()
    }

    @Test func aPseudonymTellsTheSameStoryAsItsUPNRedacted() async throws {
        for round in 0..<Self.rounds {
            try await IngestHarness.run { h in
                let (fleet, tokens) = try await Self.load(h, seed: Self.seed &+ UInt64(round))
                var random = SeededRandom(seed: Self.seed ^ UInt64(round))
                var widened = 0
                for _ in 0..<6 {
                    let user = random.pick(fleet.users).lowercased()
                    let pseudonym = h.components.pseudonymizer.identityPseudonym(user)
                    // The whole span, or a random part of it.
                    var (since, until) = (fleet.start, fleet.end)
                    if random.below(2) == 0 {
                        let a = fleet.start + Int64(random.below(Int(fleet.end - fleet.start)))
                        (since, until) = (a, min(fleet.end, a + Int64(1 + random.below(3)) * 3_600_000))
                    }
                    let expand = random.below(5) != 0
                    for (kind, member) in [(RecordKind.event, "events"), (.log, "logs")] {
                        let window =
                            "since=\(Timestamp.format(milliseconds: since))&until=\(Timestamp.format(milliseconds: until))"
                            + "&order=asc&limit=10000\(expand ? "" : "&expand=none")"
                        let upn = StoryFleet.randomCase(user, &random).replacingOccurrences(of: "@", with: "%40")
                        let byUPN = try await Self.get(h, "/v1/\(member)?identity=\(upn)&\(window)", token: tokens.pii)
                        let shownPseudonym = random.below(2) == 0 ? pseudonym : pseudonym.uppercased()
                        let byPseudonym = try await Self.get(h, "/v1/\(member)?identity=\(shownPseudonym)&\(window)", token: tokens.read)
                        #expect(byUPN.status == .ok && byPseudonym.status == .ok, "\(byUPN.body) \(byPseudonym.body)")
                        let want = fleet.story(of: user, kind: kind, since: since, until: until, expand: expand)
                        let upnRecords = byUPN.json[member] as? [[String: Any]] ?? []
                        let records = byPseudonym.json[member] as? [[String: Any]] ?? []
                        let ids = records.compactMap { $0["eventId"] as? String }
                        // The same records in the same order, and exactly the user's story.
                        #expect(ids == upnRecords.compactMap { $0["eventId"] as? String }, "\(kind) of \(user)")
                        #expect(Set(ids) == want && ids.count == want.count, "\(kind) of \(user): \(Set(ids).symmetricDifference(want))")
                        // No record of another identity; the user appears only as the pseudonym.
                        for r in records {
                            #expect(r["identity"] == nil || r["identity"] as? String == pseudonym, "\(r)")
                        }
                        // What was searched: the pseudonym, the same devices the UPN widened to.
                        let story = (byPseudonym.json["search"] as? [String: Any])?["identity"] as? [String: Any]
                        let upnStory = (byUPN.json["search"] as? [String: Any])?["identity"] as? [String: Any]
                        #expect(story?["identity"] as? String == pseudonym && story?["expanded"] as? Bool == expand)
                        let devices = story?["devices"] as? [String] ?? []
                        #expect(devices == upnStory?["devices"] as? [String] ?? [] && story?["devicesTruncated"] as? Bool == false)
                        #expect(Set(devices) == (expand ? fleet.devices(of: user, since: since, until: until) : []))
                        #expect(Self.leaks(byPseudonym.body, fleet).isEmpty, "\(Self.leaks(byPseudonym.body, fleet))")
                        if want.count > fleet.story(of: user, kind: kind, since: since, until: until, expand: false).count { widened += 1 }
                    }
                }
                #expect(widened > 0, "the generated queries reach device logs")
            }
        }
    }

    /// A bundle by pseudonym holds what the UPN's bundle holds, names the same devices and
    /// shows neither a UPN nor a secret.
    @Test func aPseudonymBundleHoldsTheUPNsBundleRedacted() async throws {
        try await IngestHarness.run { h in
            let (fleet, tokens) = try await Self.load(h, seed: Self.seed &+ 100)
            let user = fleet.users[0].lowercased()
            let pseudonym = h.components.pseudonymizer.identityPseudonym(user)
            let window = "since=\(Timestamp.format(milliseconds: fleet.start))&until=\(Timestamp.format(milliseconds: fleet.end))"
            let upn = user.replacingOccurrences(of: "@", with: "%40")
            let reader = EveryReader(h: h, token: tokens.read, piiAllowed: false)
            let cleared = EveryReader(h: h, token: tokens.pii, piiAllowed: true)
            let byPseudonym = try await reader.bundle("/v1/bundles?identity=\(pseudonym)&\(window)&format=zip", format: "zip")
            let byUPN = try await cleared.bundle("/v1/bundles?identity=\(upn)&\(window)&format=zip", format: "zip")
            for (member, kind) in [("telemetry.ndjson", RecordKind.event), ("logs.ndjson", .log)] {
                let ids = { (text: String?) in
                    Set(EveryReader.lines(Array((text ?? "").utf8), in: member).compactMap { $0["eventId"] as? String })
                }
                let want = fleet.story(of: user, kind: kind, since: fleet.start, until: fleet.end, expand: true)
                #expect(ids(byPseudonym[member]) == want && ids(byUPN[member]) == want, "\(member)")
            }
            let request = { (members: [String: String]) in
                let manifest = try? JSONSerialization.jsonObject(with: Data((members["manifest.json"] ?? "").utf8)) as? [String: Any]
                return manifest?["request"] as? [String: Any] ?? [:]
            }
            let devices = request(byPseudonym)["identityDevices"] as? [String] ?? []
            #expect(Set(devices) == fleet.devices(of: user, since: fleet.start, until: fleet.end) && !devices.isEmpty)
            #expect(devices == request(byUPN)["identityDevices"] as? [String] ?? [])
            #expect(request(byPseudonym)["identity"] as? String == pseudonym)
            #expect(byPseudonym["timeline.txt"]?.contains("identity \(pseudonym), with the logs of its devices ") == true)
            let everything = byPseudonym.values.joined(separator: "\n")
            #expect(Self.leaks(everything, fleet).isEmpty, "\(Self.leaks(everything, fleet))")
        }
    }
}
