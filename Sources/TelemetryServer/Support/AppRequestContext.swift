import Hummingbird
import NIOCore
import TelemetryStore

/// The per-request context. It carries the caller's authenticated principal once the
/// auth middleware has run, and raises the upload limit to what the config allows (the
/// ingest routes enforce their own, named, body limit).
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The authenticated caller, set by the route group's `AccessMiddleware` (nil on open routes).
    public var principal: Token?

    public init(source: Source) {
        coreContext = .init(source: source)
    }

    public var maxUploadSize: Int { 1 << 30 }
}
