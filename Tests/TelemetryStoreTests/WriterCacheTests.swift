import Foundation
import GRDB
import GRDBSQLite
import TelemetryModel
import Testing

@testable import TelemetryStore

/// The connection that commits keeps more pages than SQLite's 2 MiB default (the retry-id
/// index takes a random leaf page per record), and only that one: readers stay small.
@Suite struct WriterCacheTests {
    /// Bytes of pages `db`'s cache holds now (SQLITE_DBSTATUS_CACHE_USED).
    static func cacheUsed(_ db: Database) -> Int32 {
        var current: Int32 = 0
        var highest: Int32 = 0
        _ = sqlite3_db_status(db.sqliteConnection, SQLITE_DBSTATUS_CACHE_USED, &current, &highest, 0)
        return current
    }

    /// 60,000 events with GUID eventIds touch more index and batch pages than 2 MiB holds:
    /// the writer keeps more than that and no more than its bound; a reader's setting is
    /// SQLite's default.
    @Test(arguments: [8 << 20, 4 << 20])
    func theWriterKeepsTheConfiguredCacheAndReadersTheDefault(bytes: Int) async throws {
        let f = try StoreFixture(configuration: StoreConfiguration(writerCacheBytes: bytes))
        for round in 0..<30 {
            let batch = (0..<2_000).map {
                StoreFixture.event(device: "d\($0 % 97)", time: Int64(round * 2_000 + $0), eventId: UUID().uuidString)
            }
            _ = try await f.store.append(batch, kind: .event, env: .prod, receivedAt: 1_000, incident: nil)
        }
        let pool = f.store.databases[.prod].pool
        let (setting, used) = try await pool.writeWithoutTransaction { db in
            (try Int.fetchOne(db, sql: "PRAGMA cache_size"), Self.cacheUsed(db))
        }
        #expect(setting == -(bytes / 1024))
        #expect(used > 2 << 20, "the writer holds \(used) bytes of pages")
        // SQLite's cache_size counts pages, not the ~10% each page's header adds.
        #expect(used < Int32(bytes + bytes / 4), "the writer holds \(used) bytes of pages, past \(bytes)")
        let readerSetting = try await pool.read { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
        #expect(readerSetting == -2000)
        await f.close()
    }
}
