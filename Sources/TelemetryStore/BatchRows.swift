import GRDB
import StoreCore

/// The `batch` rows of one kind a read visits, in `firstSeq` order, limited to a device-time
/// window and a record-id range. A narrow window's rows come from ``BatchTimeIndex`` and are
/// read one by one by id, so rows outside the window are never visited; a wide one (or no
/// window) is read by a scan in id order that stops when the reader does.
final class BatchRows {
    /// Where the rows come from.
    private enum Source {
        case scan(RowCursor)
        case indexed(ids: [Int64], byID: Statement)
    }

    private let source: Source
    private var position = 0
    /// The by-id read of the current row: it stays valid until the next call.
    private var current: RowCursor?
    private let window: ClosedRange<Int64>
    private var statements: [Statement] = []
    private(set) var cost = ReadCost()

    /// The rows of `kind` that may hold records timed in `since...until` with ids after
    /// `after` (in `order`) and up to `through`, reading `columns` of each.
    convenience init(
        columns: String, kind: Int, since: Int64?, until: Int64?, after: Int64?, through: Int64?, order: RecordQuery.Order,
        db: Database
    ) throws {
        var windows: [ClosedRange<Int64>]?
        if since != nil || until != nil {
            let (lower, upper) = (since ?? .min, until ?? .max)
            // A window that ends before it starts matches nothing.
            windows = lower <= upper ? [lower...upper] : []
        }
        try self.init(columns: columns, kind: kind, windows: windows, after: after, through: through, order: order, db: db)
    }

    /// The rows of `kind` that may hold records timed in any of `windows` (nil: at any time)
    /// with ids after `after` (in `order`) and up to `through`, reading `columns` of each.
    /// Windows overlapping more than `candidateLimit` rows are scanned.
    init(
        columns: String, kind: Int, windows: [ClosedRange<Int64>]?, after: Int64?, through: Int64?, order: RecordQuery.Order,
        db: Database, candidateLimit: Int = BatchTimeIndex.maxCandidates
    ) throws {
        // What a row read by id must overlap: the windows' hull (their exact edges are the
        // reader's to check per record).
        window = (windows?.map(\.lowerBound).min() ?? .min)...(windows?.map(\.upperBound).max() ?? .max)
        if let windows, windows.isEmpty {
            source = .indexed(ids: [], byID: try db.cachedStatement(sql: "SELECT \(columns) FROM batch WHERE 0"))
            return
        }
        if let windows,
            let candidates = try BatchTimeIndex.candidates(kind: kind, windows: windows, limit: candidateLimit, db: db, cost: &cost)
        {
            var kept = candidates
            if let through { kept.removeAll { $0.firstSeq > through } }
            if let after {
                if order == .asc {
                    // The row holding the cursor starts at or before it; rows of a kind never
                    // overlap in ids, so every earlier row ends before it.
                    if let holding = kept.lastIndex(where: { $0.firstSeq <= after }) { kept.removeFirst(holding) }
                } else {
                    kept.removeAll { $0.firstSeq >= after }
                }
            }
            if order == .desc { kept.reverse() }
            let byID = try db.cachedStatement(sql: "SELECT \(columns) FROM batch WHERE id = ? AND maxTime >= ? AND minTime <= ?")
            statements.append(byID)
            source = .indexed(ids: kept.map(\.id), byID: byID)
            return
        }
        var sql = "SELECT \(columns) FROM batch WHERE kind = ?"
        var args: [any DatabaseValueConvertible] = [kind]
        if let windows {
            sql += " AND (" + windows.map { _ in "(maxTime >= ? AND minTime <= ?)" }.joined(separator: " OR ") + ")"
            for w in windows { args += [w.lowerBound, w.upperBound] }
        }
        if let after {
            // A compacted segment's ids are not contiguous (firstSeq + count is not its end):
            // ascending, start at the last row beginning at or before the cursor; its records
            // up to it are skipped by the reader.
            if order == .asc {
                sql += " AND firstSeq >= coalesce((SELECT max(firstSeq) FROM batch WHERE kind = ? AND firstSeq <= ?), 0)"
                args += [kind, after]
            } else {
                sql += " AND firstSeq < ?"
                args.append(after)
            }
        }
        if let through {
            sql += " AND firstSeq <= ?"
            args.append(through)
        }
        sql += order == .asc ? " ORDER BY firstSeq ASC" : " ORDER BY firstSeq DESC"
        let statement = try db.makeStatement(sql: sql)
        statements.append(statement)
        source = .scan(try Row.fetchCursor(statement, arguments: StatementArguments(args)))
    }

    /// The next row, valid until the next call; nil after the last.
    func next() throws -> Row? {
        switch source {
        case .scan(let cursor):
            guard let row = try cursor.next() else { return nil }
            cost.rows += 1
            return row
        case .indexed(let ids, let byID):
            while position < ids.count {
                // The previous row's cursor resets the shared statement when it goes: let it
                // go before the next one starts.
                current = nil
                let cursor = try Row.fetchCursor(byID, arguments: [ids[position], window.lowerBound, window.upperBound])
                position += 1
                current = cursor
                if let row = try cursor.next() {
                    cost.rows += 1
                    return row
                }
            }
            return nil
        }
    }

    /// What the read cost so far, with its statements' steps counted.
    func finish() -> ReadCost {
        current = nil
        for statement in statements { cost.count(statement) }
        return cost
    }
}
