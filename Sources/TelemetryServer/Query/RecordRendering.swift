import TelemetryModel
import TelemetryStore

/// How a stored record is shown: the client's JSON with the server's fields put in front —
/// `id`, `receivedAt`, `env`, and for enrollment results the status code's name — without
/// re-encoding what the client sent.
enum RecordRendering {
    static func render(_ r: StoredRecord) -> [UInt8] {
        var w = JSONWriter(capacity: 96)
        w.field("id", r.id)
        w.field("receivedAt", Timestamp.format(milliseconds: r.receivedAt))
        w.field("env", r.env.rawValue)
        if let code = r.keys.statusCode, let name = EnrollmentStatus.name(of: code) {
            w.field("statusName", name)
        }
        return JSONSplice.prepend(w.bytes, to: r.json)
    }

    /// `{"events": [...], "nextCursor": "..."}`.
    static func page(_ page: RecordPage, member: String, query: RecordQuery) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(page.records.count * 512 + 64)
        out.append(contentsOf: "{\"\(member)\":[".utf8)
        for (i, r) in page.records.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: render(r))
        }
        out.append(contentsOf: "],\"nextCursor\":".utf8)
        if let next = page.nextAfter {
            out.append(contentsOf: JSONWriter.quoted(Cursor.encode(after: next, for: query)))
        } else {
            out.append(contentsOf: "null".utf8)
        }
        out.append(contentsOf: "}\n".utf8)
        return out
    }

    static func ndjson(_ records: [StoredRecord]) -> [UInt8] {
        var out: [UInt8] = []
        for r in records {
            out.append(contentsOf: render(r))
            out.append(0x0A)
        }
        return out
    }
}
