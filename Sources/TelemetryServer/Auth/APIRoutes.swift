import ControlState
public import HTTPTypes
import Hummingbird
import Logging
import Synchronization

/// The only way routes join the daemon's router: each is registered on a group that carries
/// its `RouteAccess` and `AppRule`, so the access a route needs is written next to the route
/// itself (`api.requiring(.admin, apps: .none).post("/v1/tokens") { ... }`) and enforced by
/// that group's middleware on whatever path spelling the router resolves to it. `table`
/// records each registration, so tests can compare it with the router's own route list.
public struct APIRoutes {
    let router: Router<AppRequestContext>
    let tokens: TokenStore
    let configuration: AuthConfiguration
    let accessLog: Logger
    /// Which app an incident belongs to, for `AppRule.perApp`.
    let incidents: IncidentApps
    public let table: RouteTable

    /// Routes anyone may call (they hold no data).
    func open() -> AccessGroup { group(.open, apps: .none) }

    /// Routes that need a token holding `scope`, with what they show of apps.
    func requiring(_ scope: Scope, apps: AppRule) -> AccessGroup { group(.scope(scope), apps: apps) }

    func group(_ access: RouteAccess, apps: AppRule) -> AccessGroup {
        let middleware = AccessMiddleware(
            access: access, apps: apps, tokens: tokens, incidents: incidents, configuration: configuration, accessLog: accessLog)
        return AccessGroup(access: access, apps: apps, group: router.group().add(middleware: middleware), table: table)
    }
}

/// A router group whose routes all need the same access. Registering through it records the
/// route in the `RouteTable`; the group's `AccessMiddleware` runs before every handler.
struct AccessGroup: RouterMethods {
    typealias Context = AppRequestContext
    let access: RouteAccess
    let apps: AppRule
    let group: RouterGroup<AppRequestContext>
    let table: RouteTable

    @discardableResult func on<Responder: HTTPResponder>(
        _ path: RouterPath, method: HTTPRequest.Method, responder: Responder
    ) -> Self where Responder.Context == AppRequestContext {
        table.record(method: method, path: path.description, access: access, apps: apps)
        group.on(path, method: method, responder: responder)
        return self
    }

    @discardableResult func add(middleware: any MiddlewareProtocol<Request, Response, AppRequestContext>) -> Self {
        group.add(middleware: middleware)
        return self
    }
}

/// Every route the daemon registered, with the access it declared.
public final class RouteTable: Sendable {
    public struct Entry: Sendable, CustomStringConvertible {
        public var method: HTTPRequest.Method
        public var path: String
        public var access: RouteAccess
        public var apps: AppRule
        public var description: String { "\(method) \(path) [\(access), apps: \(apps)]" }
    }

    private let entries = Mutex<[Entry]>([])

    public init() {}

    func record(method: HTTPRequest.Method, path: String, access: RouteAccess, apps: AppRule) {
        entries.withLock { $0.append(Entry(method: method, path: path, access: access, apps: apps)) }
    }

    public var all: [Entry] { entries.withLock { $0 } }

    /// The entry for a route as the router names it (`/v1/apps/{appId}`).
    public func entry(method: HTTPRequest.Method, path: String) -> Entry? {
        all.first { $0.method == method && $0.path == path }
    }
}
