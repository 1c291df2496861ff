import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A `NOTIFY_SOCKET` the test owns: an `AF_UNIX` datagram socket read continuously on a
/// thread of its own (the kernel queues only a few unread datagrams, and a blocking read
/// must not sit on a cooperative thread), every datagram kept with its arrival time.
public final class NotifyListener: Sendable {
    public struct Message: Sendable {
        public let text: String
        public let at: ContinuousClock.Instant
        /// Whether one line of the datagram is exactly `assignment`.
        public func has(_ assignment: String) -> Bool { text.split(separator: "\n").contains { $0 == assignment } }
    }

    public let path: String
    private let fd: Int32
    private let received = Mutex<[Message]>([])
    private let stopped = Mutex(false)
    private let finished = Mutex(false)

    public init() throws {
        // sun_path holds 108 bytes: a short path directly under /tmp.
        path = "/tmp/mamtd-notify-\(UUID().uuidString.prefix(8)).sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EBADF) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            Glibc.close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        // A daemon the test runs as another user (setpriv) must be able to send to it.
        chmod(path, 0o777)
        // Wake up every 100 ms to notice close().
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let thread = Thread { [self] in readLoop() }
        thread.name = "notify-listener"
        thread.start()
    }

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 8192)
        while !stopped.withLock({ $0 }) {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0 {
                let message = Message(text: String(decoding: buffer[0..<n], as: UTF8.self), at: .now)
                received.withLock { $0.append(message) }
            }
        }
        finished.withLock { $0 = true }
    }

    public var messages: [Message] { received.withLock { $0 } }

    /// Waits (bounded) until `condition` holds for the datagrams so far; returns them, or
    /// `nil` on timeout.
    public func wait(timeout: Duration, until condition: ([Message]) -> Bool) async -> [Message]? {
        let deadline = ContinuousClock.now + timeout
        repeat {
            let now = messages
            if condition(now) { return now }
            try? await Task.sleep(for: .milliseconds(5))
        } while ContinuousClock.now < deadline
        return nil
    }

    /// The first datagram with the line `assignment`, waiting up to `timeout`.
    public func wait(for assignment: String, timeout: Duration) async -> Message? {
        await wait(timeout: timeout) { $0.contains { $0.has(assignment) } }?.first { $0.has(assignment) }
    }

    public func close() {
        stopped.withLock { $0 = true }
        let deadline = Date().addingTimeInterval(2)
        while !finished.withLock({ $0 }) && Date() < deadline { usleep(10_000) }
        Glibc.close(fd)
        unlink(path)
    }
}
