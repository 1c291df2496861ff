public import ControlState
public import Hummingbird
import NIOCore

/// The per-request context. It carries the caller's authenticated principal once the
/// auth middleware has run, and raises the upload limit to what the config allows (the
/// ingest routes enforce their own, named, body limit).
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The authenticated caller, set by the route group's `AccessMiddleware` (nil on open routes).
    public var principal: Token?
    /// The query parameters as this caller may use them, read by the same middleware: the
    /// only place a handler takes them from.
    var query = CallerQuery.none

    /// The apps whose data the caller may read; nil: every app.
    var readableApps: Set<String>? { principal?.readableApps }

    public init(source: Source) {
        coreContext = .init(source: source)
    }

    public var maxUploadSize: Int { 1 << 30 }
}
