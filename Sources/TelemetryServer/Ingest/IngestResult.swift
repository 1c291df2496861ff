import TelemetryModel

/// The answer to an ingest request: counts the client can reconcile with what it sent, the
/// lines it must fix, and the server time for clock-skew correction.
struct IngestResult: Sendable {
    var accepted = 0
    var rejected: [LineError] = []
    var dropped: [DropReason: Int] = [:]
    var env: [TelemetryEnvironment: Int] = [:]
    /// Apps the registry marks opted-out that appeared in this request (kill-switch header).
    var killedApps: Set<String> = []
    /// How long the kill switch tells those apps to stop sending.
    var killSwitchSeconds = 0
    var incident: (id: String, guid: String)?
    /// When the request was answered (milliseconds since the epoch).
    var serverTime: Int64 = 0

    /// True when nothing of the request was stored or dropped by a rule.
    var nothingTaken: Bool { accepted == 0 && dropped.values.reduce(0, +) == 0 }

    /// The counts as a JSON object, one line.
    func encode() -> [UInt8] {
        var out = JSONWriter(capacity: 256 + 48 * rejected.count)
        out.beginObject()
        writeMembers(to: &out)
        out.endObject()
        var bytes = out.bytes
        bytes.append(0x0A)
        return bytes
    }

    /// The members of the counts object, also written beside `error` when every record was
    /// refused.
    func writeMembers(to out: inout JSONWriter) {
        out.field("accepted", accepted)
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
        out.field("rejected", rawJSON: list)
        out.key("dropped")
        out.beginObject()
        for reason in DropReason.allCases { out.field(reason.rawValue, dropped[reason] ?? 0) }
        out.endObject()
        out.key("env")
        out.beginObject()
        for e in TelemetryEnvironment.allCases { out.field(e.rawValue, env[e] ?? 0) }
        out.endObject()
        if let incident {
            out.key("incident")
            out.beginObject()
            out.field("id", incident.id)
            out.field("guid", incident.guid)
            out.endObject()
        }
        out.field("serverTime", Timestamp.format(milliseconds: serverTime))
    }
}
