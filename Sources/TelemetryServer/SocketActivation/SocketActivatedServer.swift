import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import Systemd

/// Serves HTTP/1.1 on the listening socket systemd passed in (socket activation).
///
/// Hummingbird's `Server` only binds an address itself, so this is its counterpart for an
/// inherited descriptor: the same NIO `ServerBootstrap` (adopting the socket with
/// `bind(_:)` instead of binding), the same `HTTP1Channel` child pipeline and request loop,
/// the same `onServerRunning` hook once the listener is live — which is where the daemon
/// sends `READY=1` — and the same graceful stop: on shutdown it stops accepting, lets
/// in-flight requests finish (bounded by ``ConnectionDrain``) and returns.
struct SocketActivatedServer: Service, CustomStringConvertible {
    let listener: InheritedListener
    let connection: HTTP1Channel
    let onServerRunning: @Sendable (any Channel) async -> Void
    let drainDeadline: TimeAmount
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger

    var description: String { "SocketActivatedServer(\(listener))" }

    init(
        listener: InheritedListener, connection: HTTP1Channel,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void,
        drainDeadline: TimeAmount = .seconds(15),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) {
        self.listener = listener
        self.connection = connection
        self.onServerRunning = onServerRunning
        self.drainDeadline = drainDeadline
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    func run() async throws {
        let logger = self.logger
        let connection = self.connection
        let drain = ConnectionDrain(deadline: drainDeadline, logger: logger)
        // No backlog or SO_REUSEADDR options: the socket is already bound and listening
        // with the .socket unit's settings.
        let server = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(drain.makeAcceptObserver())
                }
            }
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .bind(listener.descriptor) { channel in
                connection.setup(channel: channel, logger: logger).map { value in
                    drain.pipelineReady(channel)
                    return value
                }
            }
        logger.info("serving on the socket systemd passed", metadata: ["listener": "\(listener)"])
        await withGracefulShutdownHandler {
            await onServerRunning(server.channel)
            await withDiscardingTaskGroup { group in
                do {
                    try await server.executeThenClose { inbound in
                        for try await accepted in inbound {
                            group.addTask { await connection.handle(value: accepted, logger: logger) }
                        }
                    }
                } catch {
                    logger.error("socket-activated listener failed", metadata: ["error": "\(error)"])
                }
            }
        } onGracefulShutdown: {
            drain.quiesce(listener: server.channel)
        }
    }
}
