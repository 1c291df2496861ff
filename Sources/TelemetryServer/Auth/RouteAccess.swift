public import ControlState

/// What a caller needs to reach a route, declared where the route is registered (see
/// `APIRoutes`). There is no default: a route without a declared access cannot be added.
public enum RouteAccess: Sendable, CustomStringConvertible {
    /// No token: health probes, the API description, the console's static assets.
    case open
    /// A valid token holding `scope` (or `admin`, which implies every scope).
    case scope(Scope)
    /// `scope`, unless `isOpen()` says the operator opened the route (e.g. `/metrics` for a
    /// local scraper). Read on every request, so a reload that changes it applies at once.
    case scopeUnlessOpened(Scope, isOpen: @Sendable () -> Bool)

    /// The scope a token must hold right now; nil when no token is needed.
    var requiredScope: Scope? {
        switch self {
        case .open: nil
        case .scope(let s): s
        case .scopeUnlessOpened(let s, let isOpen): isOpen() ? nil : s
        }
    }

    /// Whether a token must be presented right now.
    var needsToken: Bool {
        switch self {
        case .open: false
        case .scope: true
        case .scopeUnlessOpened(_, let isOpen): !isOpen()
        }
    }

    public var description: String {
        switch self {
        case .open: "open"
        case .scope(let s): s.rawValue
        case .scopeUnlessOpened(let s, _): "\(s.rawValue) (unless opened by configuration)"
        }
    }
}
