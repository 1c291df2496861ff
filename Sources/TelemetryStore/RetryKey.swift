import Foundation
import GRDB
import StoreCore

/// A record's retry identity as `event_id` keeps it: 16 bytes of keyed SipHash-2-4 over its
/// kind, app, `eventId` and incident, instead of those texts. The SDK's eventIds are GUIDs,
/// 36 characters, and the table and its seq index each held the texts again: 149 bytes a
/// retry id against 57 with the key (a million GUID ids; BENCHMARKS.md, issue 28), so the ids
/// took more room than the records they protect and every retention pass wrote them through
/// the WAL a second time.
///
/// Two records share a key when they share the four texts; two different ones share it with
/// probability 2⁻¹²⁸ per pair, the odds of two SDK GUIDs colliding. The hash is keyed by a
/// secret drawn when the store was created (`retry_key_secret`), so a device cannot choose an
/// eventId whose key is another app's record's and have that record answered `duplicate`.
struct RetryKey: Sendable {
    private let k0: UInt64
    private let k1: UInt64
    private let k2: UInt64
    private let k3: UInt64

    init(_ k0: UInt64, _ k1: UInt64, _ k2: UInt64, _ k3: UInt64) {
        (self.k0, self.k1, self.k2, self.k3) = (k0, k1, k2, k3)
    }

    /// The store's secret, drawn by the migration that created the table.
    static func load(_ db: Database) throws -> RetryKey {
        guard let row = try Row.fetchOne(db, sql: "SELECT k0, k1, k2, k3 FROM retry_key_secret") else {
            throw StoreError.corruptBlock("retry_key_secret is empty")
        }
        return RetryKey(
            UInt64(bitPattern: row[0]), UInt64(bitPattern: row[1]), UInt64(bitPattern: row[2]), UInt64(bitPattern: row[3]))
    }

    /// A fresh secret, stored in a new `retry_key_secret` table.
    static func create(_ db: Database) throws -> RetryKey {
        var random = SystemRandomNumberGenerator()
        let key = RetryKey(random.next(), random.next(), random.next(), random.next())
        try db.execute(
            sql: "CREATE TABLE retry_key_secret (k0 INTEGER NOT NULL, k1 INTEGER NOT NULL, k2 INTEGER NOT NULL, k3 INTEGER NOT NULL)")
        try db.execute(
            sql: "INSERT INTO retry_key_secret VALUES (?, ?, ?, ?)",
            arguments: [Int64(bitPattern: key.k0), Int64(bitPattern: key.k1), Int64(bitPattern: key.k2), Int64(bitPattern: key.k3)])
        return key
    }

    /// The migration to keys: a secret for this store and an empty keyed `event_id`; the text
    /// table's ids, if it has any, stay as ``LegacyRetryIds`` until retention has drained them.
    static func migrate(_ db: Database) throws {
        _ = try create(db)
        if try Row.fetchOne(db, sql: "SELECT 1 FROM event_id LIMIT 1") == nil {
            try db.execute(sql: "DROP TABLE event_id")
        } else {
            try db.execute(sql: "ALTER TABLE event_id RENAME TO \(LegacyRetryIds.table)")
        }
        try db.execute(
            sql: """
                CREATE TABLE event_id (
                  key BLOB NOT NULL PRIMARY KEY,
                  kind INTEGER NOT NULL,
                  seq INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE INDEX event_key_seq ON event_id(seq, kind);
                """)
    }

    /// The key of a record of `kind` (its stored code) from `appId` with `eventId`, inside
    /// `incident` ('' outside a diagnostic upload). Each text counts up to its first NUL, as
    /// ``RetryIdentity`` defines a retry.
    func key(kind: Int, appId: String, eventId: String, incident: String) -> Data {
        key(kind: kind, appId: Array(appId.utf8), eventId: Array(eventId.utf8), incident: Array(incident.utf8))
    }

    /// The same from the texts' UTF-8 bytes.
    func key(kind: Int, appId: [UInt8], eventId: [UInt8], incident: [UInt8]) -> Data {
        let (appId, eventId, incident) = (Self.upToNUL(appId), Self.upToNUL(eventId), Self.upToNUL(incident))
        // Lengths first, so no two field lists make the same message.
        var message: [UInt8] = [UInt8(truncatingIfNeeded: kind)]
        message.reserveCapacity(16 + appId.count + eventId.count + incident.count)
        for field in [appId, eventId] {
            var n = UInt64(field.count)
            repeat {
                message.append(UInt8(n & 0x7F) | (n > 0x7F ? 0x80 : 0))
                n >>= 7
            } while n > 0
            message += field
        }
        message += incident
        var out = Data(capacity: 16)
        for half in [Self.sipHash24(message, k0, k1), Self.sipHash24(message, k2, k3)] {
            withUnsafeBytes(of: half.littleEndian) { out.append(contentsOf: $0) }
        }
        return out
    }

    private static func upToNUL(_ text: [UInt8]) -> ArraySlice<UInt8> {
        text[..<(text.firstIndex(of: 0) ?? text.endIndex)]
    }

    /// SipHash-2-4 (Aumasson and Bernstein) of `message` under the 128-bit key (k0, k1).
    static func sipHash24(_ message: [UInt8], _ k0: UInt64, _ k1: UInt64) -> UInt64 {
        var v0: UInt64 = 0x736f_6d65_7073_6575 ^ k0
        var v1: UInt64 = 0x646f_7261_6e64_6f6d ^ k1
        var v2: UInt64 = 0x6c79_6765_6e65_7261 ^ k0
        var v3: UInt64 = 0x7465_6462_7974_6573 ^ k1
        func round() {
            v0 &+= v1
            v1 = (v1 << 13) | (v1 >> 51)
            v1 ^= v0
            v0 = (v0 << 32) | (v0 >> 32)
            v2 &+= v3
            v3 = (v3 << 16) | (v3 >> 48)
            v3 ^= v2
            v0 &+= v3
            v3 = (v3 << 21) | (v3 >> 43)
            v3 ^= v0
            v2 &+= v1
            v1 = (v1 << 17) | (v1 >> 47)
            v1 ^= v2
            v2 = (v2 << 32) | (v2 >> 32)
        }
        let whole = message.count & ~7
        var i = 0
        while i < whole {
            var m: UInt64 = 0
            for b in 0..<8 { m |= UInt64(message[i + b]) << UInt64(8 * b) }
            v3 ^= m
            round()
            round()
            v0 ^= m
            i += 8
        }
        var last = UInt64(message.count & 0xFF) << 56
        for b in 0..<(message.count - whole) { last |= UInt64(message[whole + b]) << UInt64(8 * b) }
        v3 ^= last
        round()
        round()
        v0 ^= last
        v2 ^= 0xFF
        for _ in 0..<4 { round() }
        return v0 ^ v1 ^ v2 ^ v3
    }
}
