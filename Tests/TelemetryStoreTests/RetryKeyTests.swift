import Foundation
import GRDB
import StoreCore
import TelemetryModel
import TestSupport
import Testing

@testable import TelemetryStore

/// Retry ids kept as keyed 16-byte hashes (``RetryKey``): the hash is SipHash-2-4, generated
/// identities never share a key, and a store of GUID eventIds spends a fraction of what the
/// texts took on them while still answering every retry `duplicate`.
@Suite struct RetryKeyTests {
    /// The reference vector of the SipHash paper (key 00..0f, message 00..0e).
    @Test func sipHashMatchesTheReferenceVector() {
        let message = (0..<15).map { UInt8($0) }
        #expect(RetryKey.sipHash24(message, 0x0706_0504_0302_0100, 0x0F0E_0D0C_0B0A_0908) == 0xA129_CA61_49BE_45E5)
        #expect(RetryKey.sipHash24([], 0x0706_0504_0302_0100, 0x0F0E_0D0C_0B0A_0908) == 0x726F_DB47_DD0E_0E31)
    }

    /// Generated identities, many sharing parts, differing only in where one field ends and
    /// the next begins, or only after a NUL: equal identities (``RetryIdentity``: each text up
    /// to its first NUL) share a key, different ones never do, and another store's secret
    /// gives other keys.
    @Test func differentIdentitiesGetDifferentKeys() {
        var random = SeededRandom(seed: 0x5EED_28)
        let key = RetryKey(random.next(), random.next(), random.next(), random.next())
        let other = RetryKey(random.next(), random.next(), random.next(), random.next())
        let alphabet = Array("ab-\u{0}é1".unicodeScalars)
        func text() -> String { String(String.UnicodeScalarView((0..<random.below(5)).map { _ in random.pick(alphabet) })) }
        var seen: [Data: String] = [:]
        for _ in 0..<20_000 {
            let (kind, app, id, incident) = (random.below(2), text(), text(), random.below(3) == 0 ? text() : "")
            // A retry's identity: each text up to its first NUL (RetryIdentity).
            let identity = [app, id, incident].map { RetryIdentity.text($0).debugDescription }.joined(separator: "|") + "|\(kind)"
            let k = key.key(kind: kind, appId: app, eventId: id, incident: incident)
            #expect(k.count == 16)
            #expect(k == key.key(kind: kind, appId: Array(app.utf8), eventId: Array(id.utf8), incident: Array(incident.utf8)))
            #expect(k != other.key(kind: kind, appId: app, eventId: id, incident: incident))
            if let before = seen[k] { #expect(before == identity, "\(before) and \(identity) share a key") }
            seen[k] = identity
        }
        #expect(seen.count > 1_000)
    }

    /// 20,000 events with GUID eventIds, as the SDK sends them: the retry ids' table and index
    /// take under 80 bytes a record (the texts took about 150), and sending them all again
    /// stores nothing.
    @Test func guidRetryIdsTakeAFractionOfTheirText() async throws {
        let f = try StoreFixture()
        var random = SeededRandom(seed: 28)
        func guid() -> String {
            let hex = Array("0123456789abcdef")
            let digits = (0..<32).map { _ in hex[random.below(16)] }
            return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }.joined(separator: "-")
        }
        let apps = ["com.contoso.outlook", "com.contoso.teams", "com.contoso.word", "com.contoso.excel"]
        var sent: [DecodedRecord] = []
        for _ in 0..<40 {
            let events = (0..<500).map { _ in StoreFixture.event(app: random.pick(apps), time: 1_000, eventId: guid()) }
            let r = try await f.store.append(events, kind: .event, env: .prod, receivedAt: 1_000, incident: nil)
            #expect(r.stored == 500 && r.duplicates == 0)
            sent += events
        }
        let bytes = try await f.store.databases.prod.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT SUM(pgsize) FROM dbstat WHERE name IN ('event_id', 'event_id_seq')") ?? 0
        }
        #expect(Double(bytes) / 20_000 < 80, "\(bytes) bytes for 20,000 retry ids")
        for chunk in stride(from: 0, to: sent.count, by: 2_000) {
            let again = try await f.store.append(
                Array(sent[chunk..<chunk + 2_000]), kind: .event, env: .prod, receivedAt: 2_000, incident: nil)
            #expect(again.stored == 0 && again.duplicates == 2_000)
        }
        await f.close()
    }
}
