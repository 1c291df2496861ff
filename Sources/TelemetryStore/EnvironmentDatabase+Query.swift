import Compression
import Foundation
import GRDB
import TelemetryModel

extension EnvironmentDatabase {
    /// Reads one page. Batches are visited in id order; a batch is skipped on its time
    /// bounds (SQL), its level mask and its Bloom filter before anything is inflated, then
    /// its keys block is filtered, and its payload is inflated only when a record matched.
    func query(_ q: RecordQuery) async throws -> RecordPage {
        let env = self.env
        return try await pool.read { db in
            var sql = "SELECT firstSeq, count, receivedAt, levelMask, bloom, keys, payload FROM batch WHERE kind = ?"
            var args: [any DatabaseValueConvertible] = [q.kind == .event ? 0 : 1]
            if let since = q.since {
                sql += " AND maxTime >= ?"
                args.append(since)
            }
            if let until = q.until {
                sql += " AND minTime <= ?"
                args.append(until)
            }
            if let after = q.after {
                // Rows of a kind never overlap in ids, but a compacted segment's ids are not
                // contiguous (firstSeq + count is not its end): ascending, start at the last
                // row beginning at or before the cursor; its records up to it are skipped below.
                if q.order == .asc {
                    sql += " AND firstSeq >= coalesce((SELECT max(firstSeq) FROM batch WHERE kind = ? AND firstSeq <= ?), 0)"
                    args += [q.kind == .event ? 0 : 1, after]
                } else {
                    sql += " AND firstSeq < ?"
                    args.append(after)
                }
            }
            sql += q.order == .asc ? " ORDER BY firstSeq ASC" : " ORDER BY firstSeq DESC"
            let terms = q.requiredTerms
            let needle = q.contains.map { Array($0.lowercased().utf8) }
            var levelMaskNeeded = 0
            if let minLevel = q.minLevel {
                for l in LogLevel.allCases where l >= minLevel { levelMaskNeeded |= 1 << l.rawValue }
            }
            var found: [StoredRecord] = []
            let want = max(q.limit, 0) + 1
            let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(args))
            batches: while let row = try rows.next() {
                if levelMaskNeeded != 0, (row["levelMask"] as Int) & levelMaskNeeded == 0 { continue }
                let bloom = BloomFilter(bytes: [UInt8](row["bloom"] as Data))
                if !terms.allSatisfy({ bloom.mightContain($0) }) { continue }
                let firstSeq: Int64 = row["firstSeq"]
                let receivedAt: Int64 = row["receivedAt"]
                let block = try StoredBlock(keysBlob: [UInt8](row["keys"] as Data), firstSeq: firstSeq, receivedAt: receivedAt)
                let keys = block.keys
                var lines: [ArraySlice<UInt8>]?
                func line(_ i: Int) throws -> ArraySlice<UInt8> {
                    if lines == nil {
                        let payload = try block.payload([UInt8](row["payload"] as Data))
                        lines = payload.split(separator: 0x0A, omittingEmptySubsequences: false)
                        guard lines!.count == keys.count else {
                            throw StoreError.corruptBlock("batch at seq \(firstSeq) has \(lines!.count) lines for \(keys.count) keys")
                        }
                    }
                    return lines![i]
                }
                let indices: [Int] = q.order == .asc ? Array(keys.indices) : keys.indices.reversed()
                for i in indices {
                    let id = block.id(i)
                    if let after = q.after, q.order == .asc ? id <= after : id >= after { continue }
                    guard q.matches(keys[i]) else { continue }
                    let json = try line(i)
                    let stored = { StoredRecord(id: id, receivedAt: block.receivedAt(i), env: env, keys: keys[i], json: Array(json)) }
                    let record: StoredRecord
                    if let presenter = q.presenter {
                        // Match the text the caller will see, never bytes it will not.
                        record = presenter.present(stored())
                        if let needle, !record.json[...].containsCaseInsensitive(needle) { continue }
                    } else {
                        if let needle, !json.containsCaseInsensitive(needle) { continue }
                        record = stored()
                    }
                    found.append(record)
                    if found.count >= want { break batches }
                }
            }
            var next: Int64?
            if found.count > q.limit {
                found.removeLast(found.count - q.limit)
                next = found.last?.id
            }
            return RecordPage(records: found, nextAfter: next)
        }
    }
}

extension ArraySlice where Element == UInt8 {
    /// ASCII case-insensitive substring test; `needle` must already be lower-case.
    func containsCaseInsensitive(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard count >= needle.count else { return false }
        let first = needle[0]
        var i = startIndex
        let last = endIndex - needle.count
        while i <= last {
            if Self.lower(self[i]) == first {
                var j = 1
                while j < needle.count, Self.lower(self[i + j]) == needle[j] { j += 1 }
                if j == needle.count { return true }
            }
            i += 1
        }
        return false
    }

    @inline(__always) static func lower(_ c: UInt8) -> UInt8 { c >= 65 && c <= 90 ? c + 32 : c }
}
