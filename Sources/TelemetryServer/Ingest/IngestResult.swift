import Hummingbird
import TelemetryModel

/// The answer to an ingest request: counts the client can reconcile with what it
/// sent, the lines it must fix, and the server time for clock-skew correction.
struct IngestResult: Sendable {
    var accepted = 0
    var rejected: [LineError] = []
    var dropped: [DropReason: Int] = [:]
    var env: [TelemetryEnvironment: Int] = [:]
    var ids: [Int64] = []
    /// Apps the registry marks opted-out that appeared in this request (kill-switch header).
    var killedApps: Set<String> = []
    var incident: (id: String, guid: String)?

    func encode(serverTime: Int64) -> [UInt8] {
        var list: [UInt8] = [UInt8(ascii: "[")]
        for (i, r) in rejected.enumerated() {
            if i > 0 { list.append(UInt8(ascii: ",")) }
            var e = JSONWriter(capacity: 64)
            e.beginObject()
            e.field("line", r.line)
            e.field("error", r.error)
            e.endObject()
            list.append(contentsOf: e.bytes)
        }
        list.append(UInt8(ascii: "]"))
        var out = JSONWriter(capacity: 256 + list.count)
        out.beginObject()
        out.field("accepted", accepted)
        out.field("rejected", rawJSON: list)
        var dropped = JSONWriter(capacity: 64)
        dropped.beginObject()
        for reason in DropReason.allCases { dropped.field(reason.rawValue, self.dropped[reason] ?? 0) }
        dropped.endObject()
        out.field("dropped", rawJSON: dropped.bytes)
        var envs = JSONWriter(capacity: 32)
        envs.beginObject()
        for e in TelemetryEnvironment.allCases { envs.field(e.rawValue, env[e] ?? 0) }
        envs.endObject()
        out.field("env", rawJSON: envs.bytes)
        if let incident {
            var inc = JSONWriter(capacity: 96)
            inc.beginObject()
            inc.field("id", incident.id)
            inc.field("guid", incident.guid)
            inc.endObject()
            out.field("incident", rawJSON: inc.bytes)
        }
        out.field("serverTime", Timestamp.format(milliseconds: serverTime))
        out.endObject()
        var bytes = out.bytes
        bytes.append(0x0A)
        return bytes
    }
}
