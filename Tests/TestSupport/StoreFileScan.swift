import Compression
public import Foundation
import GRDB
import Testing

/// Reads a store's SQLite file the way an auditor would: every column of every row of every
/// table, each blob inflated when it is a zlib stream. The privacy suites use it to prove
/// that opted-out data reached no file and that PPE data is not in the prod store.
public enum StoreFileScan {
    /// Opens a store file with SQLite, reads every column of every row, and inflates every
    /// blob that is a zlib stream; checks the opted-out marker appears in none of it and the
    /// PPE marker in nothing of the prod store. Returns how many blobs were inflated.
    public static func inflateEveryBlob(in file: URL, marker: String, ppeMarker: String) throws -> Int {
        let db = try DatabaseQueue(path: file.path)
        return try db.read { db -> Int in
            var inflated = 0
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'") {
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"") {
                    for (_, value) in row {
                        guard case .blob(let data) = value.storage else {
                            if case .string(let s) = value.storage { #expect(!s.contains(marker)) }
                            continue
                        }
                        let bytes = [UInt8](data)
                        #expect(!String(decoding: bytes, as: UTF8.self).contains(marker))
                        if let plain = try? Inflate.decompress(bytes, format: .zlib) {
                            inflated += 1
                            let text = String(decoding: plain, as: UTF8.self)
                            #expect(!text.contains(marker), "an inflated block in \(file.lastPathComponent) holds opted-out data")
                            if file.path.contains("/prod/") { #expect(!text.contains(ppeMarker), "PPE data in the prod store") }
                        }
                    }
                }
            }
            return inflated
        }
    }
}
