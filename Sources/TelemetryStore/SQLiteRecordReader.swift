import Compression
import Foundation
import GRDB
import StoreCore
import TelemetryModel

/// Reading one environment's records and incidents: pages into memory, scans that visit each
/// record while its batch is inflated, incidents by id and by page. Runs on WAL snapshots
/// beside the committer, so reads never block ingest.
struct SQLiteRecordReader: Sendable {
    let env: TelemetryEnvironment
    let pool: DatabasePool
    /// Rows where query pages stopped, for the pages that continue from them.
    let resumeBlocks: ResumeBlocks
    /// What reads of the batch table cost so far (rows and SQLite steps), for tests and stats.
    let reads: ReadCounter

    /// Reads one page into memory: every record copied out of its batch.
    func query(_ q: RecordQuery) async throws -> RecordPage {
        let env = self.env
        let resume = resumeBlocks
        let reads = self.reads
        return try await pool.read { db in
            var found: [StoredRecord] = []
            var noCache: PageKeysCache?
            let next = try Self.pass(q, env: env, db: db, readRecords: true, cache: &noCache, resume: resume, reads: reads) {
                found.append($0.stored)
            }
            return RecordPage(records: found, nextAfter: next)
        }
    }

    /// Reads one page, handing each record to `visit` while its batch is in memory; from one
    /// snapshot, so a page announced first (`announcePageEnd`) is the page then visited.
    /// The cursor can be announced only when the keys alone decide a match: a `contains`
    /// filter needs the records' text, so with one the announcement is skipped.
    func scan(_ q: RecordQuery, announcePageEnd: Bool, _ visit: @Sendable (ScanEvent) -> Void) async throws -> Int64? {
        let env = self.env
        let resume = resumeBlocks
        let reads = self.reads
        return try await pool.read { db in
            var cache: PageKeysCache?
            if announcePageEnd, q.contains == nil {
                cache = PageKeysCache()
                visit(
                    .pageEnd(try Self.pass(q, env: env, db: db, readRecords: false, cache: &cache, resume: resume, reads: reads) { _ in }))
            }
            return try Self.pass(q, env: env, db: db, readRecords: true, cache: &cache, resume: resume, reads: reads) {
                visit(.record($0))
            }
        }
    }

    /// One pass over the page. Batches are visited in id order, only those whose time bounds
    /// overlap the window (``BatchRows``); a batch is skipped on its level mask and its Bloom
    /// filter before anything is inflated,
    /// then its keys block is filtered, and its payload is inflated only when a record
    /// matched and its bytes are needed (`readRecords`, or a `contains` filter). Returns
    /// where the next page starts: the last record of this one when another match follows.
    /// With a `cache`, a pass that reads no records keeps the keys it decoded and one that
    /// reads them takes those keys instead of decoding again.
    /// With `resume`, the row a page stops in is kept decoded for the page after it, and a
    /// row kept by the page before is taken instead of decoded again.
    private static func pass(
        _ q: RecordQuery, env: TelemetryEnvironment, db: Database, readRecords: Bool, cache: inout PageKeysCache?,
        resume: ResumeBlocks?, reads: ReadCounter, visit: (ScannedRecord) throws -> Void
    ) throws -> Int64? {
        let terms = q.requiredTerms
        let anyOf = q.anyOfTerms
        let needle = q.contains.map { Array($0.lowercased().utf8) }
        let presenter = q.presenter
        let needsBytes = readRecords || needle != nil
        var levelMaskNeeded = 0
        if let minLevel = q.minLevel {
            for l in LogLevel.allCases where l >= minLevel { levelMaskNeeded |= 1 << l.rawValue }
        }
        let limit = max(q.limit, 0)
        var accepted = 0
        var lastAccepted: Int64?
        let rows = try BatchRows(
            columns: "id, firstSeq, count, receivedAt, rawBytes, storedBytes, levelMask, bloom, keys, payload",
            kind: q.kind == .event ? 0 : 1,
            since: q.since, until: q.until, after: q.after, through: q.throughID, order: q.order, db: db)
        defer { reads.add(rows.finish()) }
        let deadline = q.readBudget.map { ContinuousClock.now + $0 }
        var previousFirstSeq: Int64?
        while let row = try rows.next() {
            // Out of budget: the page ends before this row, with a cursor that starts the next
            // read at it (ascending, the row holding the cursor is read again, its records all
            // skipped; descending, rows below the last one read).
            let firstSeq: Int64 = row["firstSeq"]
            if let deadline, let previous = previousFirstSeq, ContinuousClock.now >= deadline {
                return q.order == .asc ? firstSeq - 1 : previous
            }
            // The row holding an ascending cursor is read again for nothing: it does not count
            // as progress, or a page could end before every row after it, again and again.
            if q.order == .desc || q.after.map({ firstSeq > $0 }) ?? true { previousFirstSeq = firstSeq }
            if levelMaskNeeded != 0, (row["levelMask"] as Int) & levelMaskNeeded == 0 { continue }
            let bloom = BloomFilter(bytes: [UInt8](row["bloom"] as Data))
            if !terms.allSatisfy({ bloom.mightContain($0) }) { continue }
            if let anyOf, !anyOf.contains(where: { bloom.mightContain($0) }) { continue }
            let receivedAt: Int64 = row["receivedAt"]
            let key = ResumeBlocks.Key(
                row: row["id"], firstSeq: firstSeq, count: row["count"], storedBytes: row["storedBytes"], levelMask: row["levelMask"],
                app: q.app)
            let block: StoredBlock
            var lines: StoredBlock.Lines?
            if let resumed = resume?.take(key, keep: !readRecords) {
                block = resumed.block
                lines = resumed.lines
                if readRecords { _ = cache?.take(firstSeq) }
            } else if readRecords, let kept = cache?.take(firstSeq) {
                block = kept
            } else {
                block = try StoredBlock(keysBlob: [UInt8](row["keys"] as Data), firstSeq: firstSeq, receivedAt: receivedAt, app: q.app)
                if !readRecords { cache?.keep(block, firstSeq: firstSeq) }
            }
            let keys = block.keys
            let indices: [Int] = q.order == .asc ? Array(keys.indices) : keys.indices.reversed()
            for i in indices {
                let id = block.id(i)
                if let after = q.after, q.order == .asc ? id <= after : id >= after { continue }
                if let through = q.throughID, id > through { continue }
                guard q.matches(keys[i]) else { continue }
                if needsBytes {
                    if lines == nil {
                        lines = try row.withUnsafeData(named: "payload") { try block.lines($0 ?? Data(), rawBytes: row["rawBytes"]) }
                    }
                    func show(_ raw: UnsafeBufferPointer<UInt8>) throws -> Bool {
                        func offer(_ json: UnsafeBufferPointer<UInt8>) throws -> Bool {
                            // Match the text the caller will see, never bytes it will not.
                            if let needle, !json.containsCaseInsensitive(needle) { return false }
                            if accepted < limit, readRecords {
                                try visit(ScannedRecord(id: id, receivedAt: block.receivedAt(i), env: env, keys: keys[i], json: json))
                            }
                            return true
                        }
                        // A record the caller is shown as stored is offered without a copy.
                        guard let shown = presenter?.shownJSON(raw, keys: keys[i]) else { return try offer(raw) }
                        return try shown.withUnsafeBufferPointer(offer)
                    }
                    // A record an older version stored is read in the form every reader can parse.
                    let shown = try lines!.withLine(i) { raw -> Bool in
                        guard let repaired = CanonicalJSON.repairing(stored: raw) else { return try show(raw) }
                        return try repaired.withUnsafeBufferPointer(show)
                    }
                    guard shown else { continue }
                }
                if accepted == limit {
                    if readRecords, let resume, let lines { resume.keep(key, block: block, lines: lines) }
                    return lastAccepted
                }
                accepted += 1
                lastAccepted = id
            }
        }
        return nil
    }

    func incident(id: String) async throws -> Incident? {
        let env = self.env
        return try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT * FROM incident WHERE id = ? OR guid = ?", arguments: [id, id.lowercased()])
            else { return nil }
            return Self.incident(row, env: env)
        }
    }

    /// A page of incidents, newest first (the `incident_created` index).
    func incidents(_ q: IncidentQuery) async throws -> IncidentPage {
        let env = self.env
        return try await pool.read { db in
            var clauses: [(String, [any DatabaseValueConvertible])] = []
            if let v = q.since { clauses.append(("createdAt >= ?", [v])) }
            if let v = q.until { clauses.append(("createdAt <= ?", [v])) }
            if let v = q.app { clauses.append(("appId = ?", [v])) }
            if let v = q.apps {
                clauses.append(("appId IN (\(Array(repeating: "?", count: v.count).joined(separator: ",")))", v.sorted()))
            }
            if let v = q.device { clauses.append(("deviceId = ?", [v])) }
            if let a = q.after { clauses.append(("(createdAt < ? OR (createdAt = ? AND id < ?))", [a.createdAt, a.createdAt, a.id])) }
            var sql = "SELECT * FROM incident WHERE " + (["1"] + clauses.map(\.0)).joined(separator: " AND ")
            var arguments = clauses.flatMap(\.1)
            sql += " ORDER BY createdAt DESC, id DESC LIMIT ?"
            arguments.append(max(q.limit, 0) + 1)
            let found = try Row.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).map { Self.incident($0, env: env) }
            return IncidentPage.cut(found, q)
        }
    }

    static func incident(_ row: Row, env: TelemetryEnvironment) -> Incident {
        Incident(
            id: row["id"], guid: row["guid"], env: env, appId: row["appId"], deviceId: row["deviceId"],
            sessionId: row["sessionId"], identity: row["identity"], description: row["description"],
            createdAt: row["createdAt"], recordCount: row["recordCount"], firstTime: row["firstTime"],
            lastTime: row["lastTime"])
    }

    func latestID() async throws -> Int64 {
        try await pool.read { db in
            (try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'nextSeq'") ?? 1) - 1
        }
    }
}
