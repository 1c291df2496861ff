import Logging
import NIOCore
import Synchronization

/// The open HTTP connections of a ``SocketActivatedServer`` and their graceful close.
///
/// Does what Hummingbird's server gets from NIOExtras' `ServerQuiescingHelper`: on
/// shutdown the listener is closed (no new connections), every connection is sent
/// `ChannelShouldQuiesceEvent` — Hummingbird's `HTTPConnectionStateHandler` then closes an
/// idle keep-alive connection at once and a busy one after its response — and the server
/// returns when the last one has gone. Unlike that helper it also quiesces a connection
/// whose HTTP pipeline was still being built when shutdown began (the event would have
/// passed before the handler was there), and it bounds the wait: a response that never
/// ends, such as a `follow=true` stream, must not hold the daemon past `TimeoutStopSec=`.
final class ConnectionDrain: Sendable {
    private struct State {
        var open: [ObjectIdentifier: any Channel] = [:]
        var quiescing = false
    }

    private let state = Mutex(State())
    private let deadline: TimeAmount
    private let logger: Logger

    /// - Parameter deadline: how long in-flight responses may take after shutdown began
    ///   before their connections are closed anyway.
    init(deadline: TimeAmount, logger: Logger) {
        self.deadline = deadline
        self.logger = logger
    }

    /// The server channel's first handler: sees every accepted connection before NIO
    /// hands it on, so none can slip past ``quiesce(listener:)``.
    func makeAcceptObserver() -> AcceptObserver { AcceptObserver(drain: self) }

    fileprivate func accepted(_ connection: any Channel) {
        let id = ObjectIdentifier(connection)
        state.withLock { _ = $0.open.updateValue(connection, forKey: id) }
        connection.closeFuture.whenComplete { [self] _ in
            state.withLock { _ = $0.open.removeValue(forKey: id) }
        }
    }

    /// Called on the connection's event loop once its HTTP pipeline is complete. A
    /// connection accepted while shutting down is told to quiesce now that its handler
    /// can act on it.
    func pipelineReady(_ connection: any Channel) {
        if state.withLock({ $0.quiescing }) {
            connection.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        }
    }

    /// Stops accepting and asks every connection to close after its current response;
    /// after the deadline, closes what is still open.
    func quiesce(listener: any Channel) {
        let open: [any Channel] = state.withLock { s in
            guard !s.quiescing else { return [] }
            s.quiescing = true
            return Array(s.open.values)
        }
        listener.close(promise: nil)
        for connection in open {
            connection.eventLoop.execute {
                connection.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
            }
        }
        listener.eventLoop.scheduleTask(in: deadline) { [self] in
            let stragglers = state.withLock { Array($0.open.values) }
            guard !stragglers.isEmpty else { return }
            logger.warning(
                "shutdown: closing connections whose responses did not finish in time",
                metadata: ["connections": "\(stragglers.count)", "deadline": "\(deadline)"])
            for connection in stragglers { connection.close(promise: nil) }
        }
    }

    /// Records accepted connections on the listener's pipeline and passes them on.
    final class AcceptObserver: ChannelInboundHandler, Sendable {
        typealias InboundIn = any Channel
        typealias InboundOut = any Channel
        let drain: ConnectionDrain

        init(drain: ConnectionDrain) { self.drain = drain }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            drain.accepted(unwrapInboundIn(data))
            context.fireChannelRead(data)
        }
    }
}
