import Foundation
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import ClickHouseStore
@testable import TelemetryStore

/// The support engineer's reads on the ClickHouse backend answer as the embedded store does:
/// forgiving device lookups, a user's devices, and the user's-story filter.
@Suite(.serialized, .enabled(if: PrivateClickHouse.isInstalled)) struct ClickHouseSupportQueryTests {
    @Test func lookupsAndTheUsersStoryMatchTheEmbeddedStore() async throws {
        let f = try await ClickHouseStoreFixture(database: "support")
        let reference = try ClickHouseRecordStoreTests.Reference()
        defer { Task { await reference.close() } }
        let t0 = ClickHouseRecordStoreTests.t0
        let devices = ["4F0E2A1B-AAAA", "4f0e9999-bbbb", "DEV-ONE", "dev-one", "phone-jane", "ipad-shared"]
        var events: [DecodedRecord] = []
        for (i, device) in devices.enumerated() {
            let identity = device == "phone-jane" ? "Jane@Contoso.com" : device == "ipad-shared" ? "bob@contoso.com" : ""
            events.append(
                Records.event(app: i % 2 == 0 ? "com.a" : "com.b", device: device, identity: identity, time: t0 + Int64(i) * 1000))
            events.append(Records.event(app: "com.a", device: device, time: t0 + Int64(i) * 1000 + 1))
        }
        let logs = devices.map { Records.log(app: "com.a", device: $0, level: .error, time: t0 + 500, message: "log of \($0)") }
        for (kind, records) in [(RecordKind.event, events), (.log, logs)] {
            try await f.append(records, kind: kind, receivedAt: t0)
            _ = try await reference.store.append(records, kind: kind, env: .prod, receivedAt: t0, incident: nil)
        }
        for text in ["4f0e", "4F0E2A", "dev-one", "DEV-ONE", "Dev-One", "phone", "4F0E2A1C", "zz", "ipad-shared-x"] {
            let lookup = DeviceLookup(text: text, env: .prod, limit: 5)
            let got = try await f.store.findDevices(lookup)
            let want = try await reference.store.findDevices(lookup)
            #expect(got.exact?.deviceId == want.exact?.deviceId, "\(text)")
            #expect(got.matches.map(\.deviceId) == want.matches.map(\.deviceId), "\(text)")
            #expect(got.matches.map { Set($0.apps) } == want.matches.map { Set($0.apps) }, "\(text)")
            #expect(got.near.map(\.deviceId) == want.near.map(\.deviceId), "\(text)")
        }
        let used = try await f.store.devices(usedBy: "JANE@contoso.com", env: .prod, apps: nil, since: nil, until: nil, limit: 10)
        #expect(used == ["phone-jane"])
        var story = RecordQuery(kind: .log, identity: "jane@contoso.com", limit: 100, order: .asc)
        story.identityDevices = Set(used)
        let got = try await f.store.query(story).records.map(\.keys.deviceId)
        let want = try await reference.store.query(story).records.map(\.keys.deviceId)
        #expect(got == ["phone-jane"] && got == want)
        await f.close()
    }

    /// A user named by pseudonym (ClickHouse cannot compute one: resolved while reading) widens
    /// to the devices the user used, as the UPN does and as the embedded store does: the same
    /// devices and the same records, own ones and the identity-less ones of those devices.
    @Test func aPseudonymWidensToTheUsersDevicesAsItsIdentityDoes() async throws {
        let f = try await ClickHouseStoreFixture(database: "pseudonym")
        let reference = try ClickHouseRecordStoreTests.Reference()
        defer { Task { await reference.close() } }
        let t0 = ClickHouseRecordStoreTests.t0
        var random = SeededRandom(seed: 0x5E0D)
        let users = (0..<5).map { "User\($0)@Contoso.com" }
        // Each user has a device; two shared devices have two users each; a kiosk has none.
        var usersOf = Dictionary(uniqueKeysWithValues: users.enumerated().map { ("own-\($0.offset)", [$0.element]) })
        usersOf["shared-a"] = [users[0], users[1]]
        usersOf["shared-b"] = [users[2], users[3]]
        usersOf["kiosk"] = []
        let devices = usersOf.keys.sorted()
        var events: [DecodedRecord] = []
        var logs: [DecodedRecord] = []
        for i in 0..<400 {
            let device = random.pick(devices)
            let identity = usersOf[device]!.isEmpty || random.below(2) == 0 ? "" : random.pick(usersOf[device]!)
            let time = t0 + Int64(i) * 1000
            if random.below(2) == 0 || !identity.isEmpty {
                events.append(Records.event(app: random.pick(["com.a", "com.b"]), device: device, identity: identity, time: time))
            } else {
                logs.append(Records.log(app: "com.a", device: device, level: .error, time: time, message: "log \(i)"))
            }
        }
        for (kind, records) in [(RecordKind.event, events), (.log, logs)] {
            try await f.append(records, kind: kind, receivedAt: t0)
            _ = try await reference.store.append(records, kind: kind, env: .prod, receivedAt: t0, incident: nil)
        }
        for _ in 0..<8 {
            let user = random.pick(users)
            let filter = IdentityPseudonymFilter(pseudonym: Self.pseudonym(user), pseudonymOf: Self.pseudonym)
            let since = t0 + Int64(random.below(300)) * 1000
            let until = since + Int64(1 + random.below(200)) * 1000
            let apps: Set<String>? = random.below(3) == 0 ? ["com.a"] : nil
            let byPseudonym = try await f.store.devices(
                usedBy: .pseudonym(filter), env: .prod, apps: apps, since: since, until: until, limit: 50)
            let byIdentity = try await f.store.devices(usedBy: user, env: .prod, apps: apps, since: since, until: until, limit: 50)
            let embedded = try await reference.store.devices(
                usedBy: .pseudonym(filter), env: .prod, apps: apps, since: since, until: until, limit: 50)
            #expect(byPseudonym == byIdentity && Set(byPseudonym) == Set(embedded), "\(user) \(since)...\(until)")
            for kind in [RecordKind.event, .log] {
                var named = RecordQuery(kind: kind, identity: user, since: since, until: until, limit: 1000, order: .asc)
                named.apps = apps
                named.identityDevices = Set(byIdentity)
                var pseudonymous = named
                pseudonymous.identity = nil
                pseudonymous.identityPseudonym = filter
                let times = { (page: RecordPage) in page.records.map(\.keys.time) }
                let got = times(try await f.store.query(pseudonymous))
                #expect(got == times(try await f.store.query(named)), "\(kind) of \(user)")
                #expect(got == times(try await reference.store.query(pseudonymous)), "\(kind) of \(user)")
                let records = try await f.store.query(pseudonymous).records
                #expect(records.allSatisfy { $0.keys.identity == user.lowercased() || $0.keys.identity.isEmpty })
            }
        }
        // Every user's story reaches device logs somewhere: the widening is exercised.
        var widened = RecordQuery(kind: .log, since: t0, until: t0 + 400_000, limit: 1000)
        widened.identityPseudonym = IdentityPseudonymFilter(pseudonym: Self.pseudonym(users[0]), pseudonymOf: Self.pseudonym)
        widened.identityDevices = ["own-0", "shared-a"]
        #expect(!(try await f.store.query(widened).records.isEmpty))
        await f.close()
    }

    /// A stand-in for the daemon's keyed pseudonym (this target does not link the key): any
    /// function of the lower-cased identity that does not show it.
    @Sendable static func pseudonym(_ identity: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in identity.lowercased().utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return "user-" + String(hash, radix: 16)
    }

    /// Distinct devices and users per app and status code, and among failed calls, as the
    /// embedded store counts them from its records.
    @Test func enrollmentReachMatchesTheEmbeddedStore() async throws {
        let f = try await ClickHouseStoreFixture(database: "reach")
        let reference = try ClickHouseRecordStoreTests.Reference()
        defer { Task { await reference.close() } }
        let t0 = ClickHouseRecordStoreTests.t0
        var random = SeededRandom(seed: 0x2EAC)
        let calls = (0..<300).map { i in
            Records.event(
                app: random.pick(["com.a", "com.b"]), device: random.pick(["", "d1", "d2", "d3", "d4"]),
                identity: random.pick(["", "u1@x.com", "U2@x.com"]), name: random.below(5) == 0 ? "AppLaunch" : "EnrollmentCall",
                time: t0 + Int64(i) * 1000, statusCode: random.pick([100, 200, 225, nil]), succeeded: random.pick([nil, true, false]))
        }
        try await f.append(calls, receivedAt: t0)
        _ = try await reference.store.append(calls, kind: .event, env: .prod, receivedAt: t0, incident: nil)
        for app in [nil, "com.b"] {
            let got = try await f.store.enrollmentReach(env: .prod, since: t0 + 20_000, until: t0 + 250_000, app: app)
            let want = try await reference.store.enrollmentReach(env: .prod, since: t0 + 20_000, until: t0 + 250_000, app: app)
            #expect(got == want)
            #expect(!want.byCode.isEmpty && !want.failingByApp.isEmpty)
        }
        await f.close()
    }

    /// Incidents come newest first from ClickHouse (every collector's) merged with the spool's.
    @Test func incidentPagesAnswerFromClickHouseAndTheSpool() async throws {
        let f = try await ClickHouseStoreFixture(database: "incidents")
        let t0 = ClickHouseRecordStoreTests.t0
        var ids: [String] = []
        for i in 0..<7 {
            let id = IncidentID.random().value
            let incident = Incident(
                id: id, guid: UUID().uuidString.lowercased(), env: .prod, appId: i % 2 == 0 ? "com.a" : "com.b", deviceId: "dev-\(i % 3)",
                sessionId: nil, identity: nil, description: "note \(i)", createdAt: t0 + Int64(i / 2) * 1000, recordCount: 1,
                firstTime: nil,
                lastTime: nil)
            _ = try await f.spool.append(
                [Records.log(app: incident.appId, device: incident.deviceId!, level: .error, time: t0, message: "m\(i)")], kind: .log,
                env: .prod, receivedAt: incident.createdAt, incident: incident)
            ids.append(id)
        }
        let expected = { (keep: (Int) -> Bool) in
            (0..<7).filter(keep).map { (t0 + Int64($0 / 2) * 1000, ids[$0]) }.sorted { $0 > $1 }.map(\.1)
        }
        _ = try await f.store.incidents(IncidentQuery())  // waits for shipping (the fence)
        // The forwarder inserts incidents after the batches the fence waits for; until they
        // are in ClickHouse, a collector with an empty spool cannot see them (a clean-clone
        // run saw 3 of the 7 there).
        let deadline = ContinuousClock.now + .seconds(30)
        while try await !f.spool.unshippedIncidents(env: .prod).isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        // A collector with an empty spool reads ClickHouse alone.
        let other = try ClickHouseRecordStoreTests.Reference()
        defer { Task { await other.close() } }
        let remote = ClickHouseRecordStore(spool: other.store, client: f.client, clock: SystemWallClock(), metrics: f.metrics)
        for store in [f.store, remote] as [any RecordStore] {
            for (query, keep) in [
                (IncidentQuery(limit: 3), { (_: Int) in true }), (IncidentQuery(app: "com.b", limit: 3), { $0 % 2 == 1 }),
            ] {
                var q = query
                var seen: [String] = []
                while true {
                    let page = try await store.incidents(q)
                    seen += page.incidents.map(\.id)
                    guard let next = page.next, seen.count < 20 else { break }
                    q.after = next
                }
                #expect(seen == expected(keep))
            }
        }
        await f.close()
    }
}
