import StoreCore
import TelemetryModel

/// Spool batches as `JSONEachRow` insert bodies for `records`, and incidents for
/// `incidents`. Every value is derived from the spooled batch alone (ids from its receive
/// time and sequence numbers, see ``RecordID``), so re-sending a batch writes identical rows.
enum ClickHouseRows {
    static func records(_ batch: SpoolBatch, collector: CollectorID, into out: inout [UInt8]) {
        for (i, keys) in batch.keys.enumerated() {
            let id = RecordID(receivedAtMs: batch.receivedAt, collector: collector, sequence: batch.firstSeq + Int64(i))
            var w = JSONWriter(capacity: batch.records[i].count + 256)
            w.beginObject()
            w.field("id", id.rawValue)
            w.field("collector", Int(collector.rawValue))
            w.field("kind", batch.kind == .event ? "event" : "log")
            w.field("receivedAt", batch.receivedAt)
            w.field("time", keys.time)
            w.field("app", keys.appId)
            w.field("device", keys.deviceId)
            w.field("session", keys.sessionId)
            w.field("identity", keys.identity)
            w.field("name", keys.name)
            w.field("detail", keys.detail)
            // The column is Int32 (the range ingest takes); a wider code an older version stored is
            // kept in `raw` only, so the insert can never be refused for it.
            let code = keys.statusCode.flatMap { Int32(exactly: $0) }
            w.field("statusCode", rawJSON: code.map { Array(String($0).utf8) } ?? Array("null".utf8))
            w.field("durationMs", rawJSON: keys.durationMs.map { Array(ClickHouseValue.floatLiteral($0).utf8) } ?? Array("null".utf8))
            w.field("succeeded", rawJSON: Array((keys.succeeded.map { $0 ? "1" : "0" } ?? "null").utf8))
            w.field("level", rawJSON: keys.level.map { JSONWriter.quoted($0.name) } ?? Array("null".utf8))
            w.field("incident", keys.incident)
            w.field("retentionClass", retentionClass(batch.kind, keys.level))
            w.key("raw")
            var bytes = w.bytes
            JSONWriter.appendString(utf8: batch.records[i], to: &bytes)
            bytes.append(UInt8(ascii: "}"))
            bytes.append(0x0A)
            out.append(contentsOf: bytes)
        }
    }

    /// Per record, unlike the embedded store's per-batch class: a verbose record expires on
    /// the verbose schedule even when it shares a batch with other levels.
    static func retentionClass(_ kind: RecordKind, _ level: LogLevel?) -> String {
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
