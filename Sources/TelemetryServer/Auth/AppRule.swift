import ControlState
import Hummingbird
import StoreCore
import TelemetryModel

/// How a route's answer depends on apps, declared where the route is registered next to
/// the scope it needs (`api.requiring(.read, apps: .perApp)`), so a token bound to apps is
/// held to them by the route group's middleware on every route, not route by route.
public enum AppRule: Sendable, CustomStringConvertible {
    /// The route shows nothing that belongs to an app (the caller's own token, a pseudonym,
    /// health, the API description, the console's files, the daemon's own settings).
    case none
    /// The route shows every app at once (`/metrics`): an app-bound caller is refused.
    case everyApp
    /// The route shows records, stats or incidents of apps. For an app-bound caller an
    /// `app` parameter must name one of its apps and an incident the request names (path
    /// `{id}` or `incident=`) must belong to one, else the request is refused before the
    /// handler runs; the handler reads through the caller's apps (`readableApps`).
    case perApp
    /// Ingest: the pipeline checks every record's app against the token (`AppBinding`).
    case perRecord

    public var description: String {
        switch self {
        case .none: "none"
        case .everyApp: "every app"
        case .perApp: "per app"
        case .perRecord: "per record"
        }
    }

    /// Refuses a request of `token` (bound to `apps`) that reaches beyond them.
    func check(
        _ query: CallerQuery, incidentInPath: String?, token: Token, apps: Set<String>, incidents: IncidentApps
    ) async throws {
        let bound = "token '\(token.name)' reads only \(apps.sorted().joined(separator: ", "))"
        switch self {
        case .none, .perRecord:
            return
        case .everyApp:
            throw APIError(.forbidden, code: "app_not_allowed", message: "\(bound); this route shows every app")
        case .perApp:
            if let app = query.value("app"), !apps.contains(app) {
                throw APIError(.forbidden, code: "app_not_allowed", message: "\(bound), not '\(app)'")
            }
            for raw in [incidentInPath, query.value("incident")].compactMap({ $0 }) {
                // Another app's incident is answered as if it did not exist.
                if let app = try await incidents.app(raw), !apps.contains(app) { throw IncidentApps.notFound(raw) }
            }
        }
    }
}

/// The app an incident belongs to, by the id a caller gives (short or GUID form).
struct IncidentApps: Sendable {
    let store: any RecordStore

    func app(_ raw: String) async throws -> String? {
        try await store.incident(id: IncidentID(parsing: raw)?.value ?? raw)?.appId
    }

    /// The refusal for an incident that is unknown, or not the caller's to see.
    static func notFound(_ raw: String) -> APIError {
        APIError.notFound("no incident '\(raw)'; incident ids look like MAM-7K2Q-9XPF")
    }
}
