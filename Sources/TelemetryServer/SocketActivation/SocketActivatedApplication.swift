import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization
import Systemd

/// The daemon's HTTP application when systemd passed the listening socket: the same
/// router and background services as ``buildApplication(components:hooks:logger:)``,
/// served by ``SocketActivatedServer`` instead of Hummingbird's binding server.
///
/// It runs its services in the same order as Hummingbird's `Application` — background
/// services first, server last — so on shutdown the server drains its requests before
/// the committer commits the last batch and the journal mirror flushes.
struct SocketActivatedApplication: Service, CustomStringConvertible {
    let services: [any Service]
    let server: SocketActivatedServer
    let logger: Logger

    var description: String { "SocketActivatedApplication" }

    func run() async throws {
        let group = ServiceGroup(configuration: .init(services: services + [server], logger: logger))
        try await group.run()
    }
}

/// Builds the socket-activated counterpart of ``buildApplication(components:hooks:logger:)``.
func buildSocketActivatedApplication(
    listener: InheritedListener, components: DaemonComponents, hooks: ApplicationHooks = .init(), logger: Logger
) -> SocketActivatedApplication {
    let responder = ApplicationResponder(
        responder: buildRouter(components: components, hooks: hooks, logger: logger).buildResponder(),
        serverName: "mamtelemetryd", logger: logger)
    let server = SocketActivatedServer(
        listener: listener,
        connection: HTTP1Channel(responder: { request, writer, channel in
            try await responder.respond(to: request, writer: writer, channel: channel)
        }),
        onServerRunning: hooks.onServerRunning,
        logger: logger)
    return SocketActivatedApplication(services: components.services + hooks.services, server: server, logger: logger)
}

/// Turns the router's responder into the channel-level responder `HTTP1Channel` calls,
/// exactly as Hummingbird's `Application.run()` does: a request context per request with
/// a request id in its logger, errors the router did not turn into a response (it maps
/// `HTTPResponseError`s itself) become a bare 500, parse errors go back to the channel
/// (which answers 400 and closes), and every response gets `Date` and `Server` headers.
struct ApplicationResponder<Responder: HTTPResponder>: Sendable
where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    let responder: Responder
    let serverName: String
    let logger: Logger
    let dates = HTTPDateCache()

    /// A parse error met while the response was being written: the channel must not
    /// write a second (400) response, only close.
    struct ParseErrorWhileWritingResponse: Error {}

    func respond(to request: Request, writer: consuming ResponseWriter, channel: any Channel) async throws {
        var logger = self.logger
        logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
        let context = Responder.Context(source: .init(channel: channel, logger: logger))
        var response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch let error as HTTPParserError {
            throw error
        } catch {
            logger.debug("Unrecognised Error", metadata: ["error.type": "\(error)"])
            response = Response(status: .internalServerError, body: .init())
        }
        response.headers[.date] = dates.current()
        response.headers[.server] = serverName
        do {
            try await writer.write(response: response.head, body: response.body)
        } catch is HTTPParserError {
            throw ParseErrorWhileWritingResponse()
        }
    }
}

/// The RFC 9110 `Date` header value (`Sun, 06 Nov 1994 08:49:37 GMT`), formatted once per
/// second rather than per request, with fixed English names whatever the locale.
final class HTTPDateCache: Sendable {
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private let cached = Mutex<(second: Int, text: String)>((-1, ""))

    func current() -> String {
        var now = time(nil)
        return cached.withLock { c in
            if c.second != now {
                var t = tm()
                gmtime_r(&now, &t)
                func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
                let text =
                    "\(Self.days[Int(t.tm_wday)]), \(two(t.tm_mday)) \(Self.months[Int(t.tm_mon)]) \(1900 + t.tm_year) "
                    + "\(two(t.tm_hour)):\(two(t.tm_min)):\(two(t.tm_sec)) GMT"
                c = (now, text)
            }
            return c.text
        }
    }
}
