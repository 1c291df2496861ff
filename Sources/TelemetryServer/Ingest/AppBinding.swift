import ControlState
import TelemetryModel

/// Which apps a caller may store records for. An ingest token bound to apps may store only
/// their records, whatever the route, the body format, or where a record's app id came
/// from (its own `appId`, `?app=`, `X-MAM-App-Id`, an upload's top level). The ingest
/// pipeline applies it to every record it is handed, so no route can store around it.
struct AppBinding {
    let caller: Token

    /// The records the caller may store, by kind; the others become per-line refusals.
    /// Throws when an upload names an app the caller may not post for, or when records were
    /// given and none may be stored (over all kinds, so a request whose logs are another
    /// app's but whose events are allowed is not refused whole).
    func apply(
        _ records: [RecordKind: [DecodedRecord]], rejected: [LineError], uploadApp: String?
    ) throws(IngestRefusal) -> (kept: [RecordKind: [DecodedRecord]], rejected: [LineError]) {
        if let uploadApp, !caller.mayPost(forApp: uploadApp) { throw refusal }
        var kept: [RecordKind: [DecodedRecord]] = [:]
        var refused = rejected
        var given = 0
        for (kind, list) in records {
            given += list.count
            for r in list {
                if caller.mayPost(forApp: r.keys.appId) {
                    kept[kind, default: []].append(r)
                } else {
                    refused.append(
                        LineError(line: r.line, error: "token '\(caller.name)' may not post for app '\(r.keys.appId)' (bound to \(bound))"))
                }
            }
        }
        if kept.isEmpty && given > 0 { throw refusal }
        return (kept, refused.count == rejected.count ? rejected : refused.sorted { $0.line < $1.line })
    }

    private var bound: String { caller.apps.joined(separator: ", ") }

    private var refusal: IngestRefusal { .appNotAllowed(token: caller.name, boundTo: caller.apps) }
}
