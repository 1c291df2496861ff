import TelemetryModel
import TelemetryStore

/// Which apps a caller may store records for. An ingest token bound to apps may store only
/// their records, whatever the route, the body format, or where a record's app id came
/// from (its own `appId`, `?app=`, `X-MAM-App-Id`, an upload's top level). The ingest
/// pipeline applies it to every record it is handed, so no route can store around it.
struct AppBinding {
    let caller: Token

    /// The records the caller may store; the others become per-line refusals. Throws 403
    /// when an upload names an app the caller may not post for, or when records were given
    /// and none may be stored.
    func apply(_ records: [DecodedRecord], rejected: [LineError], uploadApp: String?) throws -> ([DecodedRecord], [LineError]) {
        if let uploadApp, !caller.mayPost(forApp: uploadApp) { throw refusal }
        var kept: [DecodedRecord] = []
        var refused = rejected
        for r in records {
            if caller.mayPost(forApp: r.keys.appId) {
                kept.append(r)
            } else {
                refused.append(LineError(line: r.line, error: "token '\(caller.name)' may not post for app '\(r.keys.appId)' (bound to \(bound))"))
            }
        }
        if kept.isEmpty && !records.isEmpty { throw refusal }
        return (kept, refused.count == rejected.count ? rejected : refused.sorted { $0.line < $1.line })
    }

    private var bound: String { caller.apps.joined(separator: ", ") }

    private var refusal: APIError {
        APIError(.forbidden, code: "app_not_allowed", message: "token '\(caller.name)' may only post for \(bound)")
    }
}
