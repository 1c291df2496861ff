import StoreCore
import TelemetryModel

/// Spool batches as `TabSeparated` insert bodies for `records` (columns in
/// ``recordColumns`` order), and incidents as `JSONEachRow` for `incidents`. Every value is
/// derived from the spooled batch alone (ids from its receive time and sequence numbers, see
/// ``RecordID``), so re-sending a batch writes identical rows. A record's body is its spooled
/// JSON line escaped, with no decoding and re-encoding on the way.
enum ClickHouseRows {
    /// The `records` columns a body's fields fill, in order; the insert names them, so the
    /// table may grow columns with defaults without breaking a running collector.
    static let recordColumns = [
        "id", "collector", "kind", "receivedAt", "time", "app", "device", "session", "identity", "name", "detail", "statusCode",
        "durationMs", "succeeded", "level", "incident", "retentionClass", "raw",
    ]

    static func records(_ batch: SpoolBatch, collector: CollectorID, into w: inout TabSeparatedWriter) {
        let kind: StaticString = batch.kind == .event ? "event" : "log"
        for (i, keys) in batch.keys.enumerated() {
            w.int(RecordID(receivedAtMs: batch.receivedAt, collector: collector, sequence: batch.firstSeq &+ Int64(i)).rawValue)
            w.int(Int64(collector.rawValue))
            w.plain(kind)
            w.int(batch.receivedAt)
            w.int(keys.time)
            w.string(keys.appId)
            w.string(keys.deviceId)
            w.string(keys.sessionId)
            w.string(keys.identity)
            w.string(keys.name)
            w.string(keys.detail)
            // The column is Int32 (the range ingest takes); a wider code an older version stored is
            // kept in `raw` only, so the insert can never be refused for it.
            if let code = keys.statusCode.flatMap({ Int32(exactly: $0) }) { w.int(Int64(code)) } else { w.null() }
            if let d = keys.durationMs { w.plain(ClickHouseValue.floatLiteral(d)) } else { w.null() }
            if let ok = keys.succeeded { w.plain(ok ? "1" : "0") } else { w.null() }
            if let level = keys.level { w.string(level.name) } else { w.null() }
            w.string(keys.incident)
            w.plain(retentionClass(batch.kind, keys.level))
            w.string(bytes: batch.records[i])
            w.endRow()
        }
    }

    /// The `event_ids` columns ``eventIDs(_:collector:into:)`` fills, in order.
    static let eventIDColumns = ["kind", "app", "eventId", "id", "collector", "receivedAt"]

    /// One `event_ids` row per record of the batch that carries an `eventId`, naming the
    /// `records` row it went to; as deterministic as the records' rows, so re-sent rows fold.
    static func eventIDs(_ batch: SpoolBatch, collector: CollectorID, into w: inout TabSeparatedWriter) {
        let kind: StaticString = batch.kind == .event ? "event" : "log"
        for e in batch.eventIDs where e.index >= 0 && e.index < batch.keys.count {
            w.plain(kind)
            w.string(e.appId)
            w.string(e.eventId)
            w.int(RecordID(receivedAtMs: batch.receivedAt, collector: collector, sequence: batch.firstSeq &+ Int64(e.index)).rawValue)
            w.int(Int64(collector.rawValue))
            w.int(batch.receivedAt)
            w.endRow()
        }
    }

    /// Per record, unlike the embedded store's per-batch class: a verbose record expires on
    /// the verbose schedule even when it shares a batch with other levels.
    static func retentionClass(_ kind: RecordKind, _ level: LogLevel?) -> StaticString {
        if kind == .event { return "events" }
        return level == .verbose ? "verboseLogs" : "logs"
    }

    static func incidents(_ incidents: [Incident], collector: CollectorID) -> [UInt8] {
        var out: [UInt8] = []
        func optional(_ w: inout JSONWriter, _ key: String, _ value: String?) {
            w.field(key, rawJSON: value.map { JSONWriter.quoted($0) } ?? Array("null".utf8))
        }
        for i in incidents {
            var w = JSONWriter()
            w.beginObject()
            w.field("id", i.id)
            w.field("guid", i.guid)
            w.field("app", i.appId)
            optional(&w, "device", i.deviceId)
            optional(&w, "session", i.sessionId)
            optional(&w, "identity", i.identity)
            optional(&w, "description", i.description)
            w.field("createdAt", i.createdAt)
            w.field("recordCount", i.recordCount)
            w.field("firstTime", rawJSON: i.firstTime.map { Array(String($0).utf8) } ?? Array("null".utf8))
            w.field("lastTime", rawJSON: i.lastTime.map { Array(String($0).utf8) } ?? Array("null".utf8))
            w.field("collector", Int(collector.rawValue))
            w.endObject()
            out += w.bytes
            out.append(0x0A)
        }
        return out
    }
}
