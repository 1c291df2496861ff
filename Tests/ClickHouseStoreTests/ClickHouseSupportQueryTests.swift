import Foundation
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
            events.append(Records.event(app: i % 2 == 0 ? "com.a" : "com.b", device: device, identity: identity, time: t0 + Int64(i) * 1000))
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
        let used = try await f.store.devices(usedBy: "JANE@contoso.com", env: .prod, since: nil, until: nil, limit: 10)
        #expect(used == ["phone-jane"])
        var story = RecordQuery(kind: .log, identity: "jane@contoso.com", limit: 100, order: .asc)
        story.identityDevices = Set(used)
        let got = try await f.store.query(story).records.map(\.keys.deviceId)
        let want = try await reference.store.query(story).records.map(\.keys.deviceId)
        #expect(got == ["phone-jane"] && got == want)
        await f.close()
    }
}
