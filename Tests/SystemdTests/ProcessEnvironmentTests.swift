import Foundation
import Glibc
import Logging
import ServiceLifecycle
import Synchronization
import Systemd
import Testing

/// Tests that set process-wide environment variables (`NOTIFY_SOCKET`, `WATCHDOG_USEC`,
/// `LISTEN_FDS`) that libsystemd reads. Serialized, so no two of them see each other's
/// environment; no other suite reads these variables.
@Suite("process environment", .serialized)
struct ProcessEnvironmentTests {}

/// A datagram socket standing in for systemd's notification socket.
final class NotifySocket: Sendable {
    let path: String
    let fd: Int32

    init() throws {
        // sun_path holds 108 bytes: keep the path short.
        path = "/tmp/mtn-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Every datagram waiting now, oldest first, as text.
    func drain() -> [String] {
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard count > 0 else { return messages }
            messages.append(String(decoding: buffer[..<count], as: UTF8.self))
        }
    }

    /// Points libsystemd at this socket for the duration of `body`.
    func withNotifySocket<R>(_ body: () async throws -> R) async rethrows -> R {
        setenv("NOTIFY_SOCKET", path, 1)
        defer { unsetenv("NOTIFY_SOCKET") }
        return try await body()
    }
}

extension ProcessEnvironmentTests {
    @Suite("SystemdNotifier")
    struct NotifierTests {
        @Test("without NOTIFY_SOCKET every call is a no-op")
        func unsupervised() {
            unsetenv("NOTIFY_SOCKET")
            let notifier = SystemdNotifier()
            #expect(!notifier.isSupervised)
            #expect(!notifier.ready())
            #expect(!notifier.watchdog())
            #expect(!notifier.status("x"))
        }

        @Test("each call sends the documented assignments")
        func datagrams() async throws {
            let socket = try NotifySocket()
            let notifier = SystemdNotifier()
            try await socket.withNotifySocket {
                #expect(notifier.isSupervised)
                #expect(notifier.ready())
                #expect(notifier.status("serving; 3 apps"))
                #expect(notifier.ready(status: "reloaded\nconfig v2"))
                #expect(notifier.watchdog())
                #expect(notifier.extendTimeout(by: .seconds(5)))
                #expect(notifier.stopping())
                let before = try monotonicMicroseconds()
                #expect(notifier.reloading())
                let after = try monotonicMicroseconds()

                let messages = socket.drain()
                #expect(messages.count == 7)
                #expect(
                    Array(messages.prefix(6)) == [
                        "READY=1", "STATUS=serving; 3 apps", "READY=1\nSTATUS=reloaded config v2", "WATCHDOG=1",
                        "EXTEND_TIMEOUT_USEC=5000000", "STOPPING=1",
                    ])
                let reload = try #require(messages.last).split(separator: "\n")
                #expect(reload.first == "RELOADING=1")
                let stamp = try #require(reload.last?.split(separator: "=").last.flatMap { UInt64($0) })
                #expect(reload.last?.hasPrefix("MONOTONIC_USEC=") == true)
                #expect(stamp >= before && stamp <= after)
            }
        }

        @Test("the watchdog interval is half of WATCHDOG_USEC, for this process only")
        func watchdogInterval() {
            defer {
                unsetenv("WATCHDOG_USEC")
                unsetenv("WATCHDOG_PID")
            }
            unsetenv("WATCHDOG_USEC")
            #expect(SystemdNotifier().watchdogInterval == nil)
            setenv("WATCHDOG_USEC", "30000000", 1)
            #expect(SystemdNotifier().watchdogInterval == .seconds(15))
            setenv("WATCHDOG_PID", String(getpid()), 1)
            #expect(SystemdNotifier().watchdogInterval == .seconds(15))
            setenv("WATCHDOG_PID", "1", 1)
            #expect(SystemdNotifier().watchdogInterval == nil)
        }

        func monotonicMicroseconds() throws -> UInt64 {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
        }
    }

    @Suite("WatchdogService")
    struct WatchdogServiceTests {
        static let quiet = Logger(label: "test.watchdog") { _ in SwiftLogNoOpLogHandler() }

        @Test("pings only while the liveness probe says healthy, and keeps STATUS current")
        func pingsOnlyWhenHealthy() async throws {
            let socket = try NotifySocket()
            let probes = Atomic<Int>(0)
            let log = RecordingSink()
            let logger = Logger(label: "test.watchdog") {
                JournaldLogHandler(label: $0, level: .trace, sink: log, metadataProvider: nil)
            }
            let service = WatchdogService(
                interval: .milliseconds(10), logger: logger,
                livenessProbe: { probes.add(1, ordering: .relaxed).newValue <= 3 },
                statusText: { "probed \(probes.load(ordering: .relaxed)) times" })
            // Read as the datagrams come: the kernel queues only net.unix.max_dgram_qlen (often
            // 10) unread datagrams, after which sd_notify blocks, as it would against a
            // service manager that stopped reading.
            let collected = Mutex<[String]>([])
            let collector = Task {
                while !Task.isCancelled {
                    let batch = socket.drain()
                    collected.withLock { $0 += batch }
                    try? await Task.sleep(for: .milliseconds(2))
                }
            }
            try await socket.withNotifySocket {
                let group = ServiceGroup(services: [service], logger: Self.quiet)
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    #expect(await eventually { probes.load(ordering: .relaxed) >= 8 })
                    await group.triggerGracefulShutdown()
                    try await tasks.waitForAll()
                }
            }
            collector.cancel()
            await collector.value
            let messages = collected.withLock { $0 } + socket.drain()
            #expect(messages.filter { $0 == "WATCHDOG=1" }.count == 3)
            let statuses = messages.filter { $0.hasPrefix("STATUS=probed ") }
            #expect(statuses.count >= 8)
            #expect(statuses.first == "STATUS=probed 1 times")
            // The pings came first, while the probe was healthy.
            let lastPing = try #require(messages.lastIndex(of: "WATCHDOG=1"))
            #expect(messages[..<lastPing].filter { $0.hasPrefix("STATUS=") }.count == 2)
            let failures = log.entries.filter { $0.value(of: "MESSAGE")?.contains("liveness probe failed") == true }
            #expect(failures.count == 1)
        }

        @Test("pings on its own at half WATCHDOG_USEC")
        func intervalFromEnvironment() async throws {
            let socket = try NotifySocket()
            setenv("WATCHDOG_USEC", "40000", 1)
            defer { unsetenv("WATCHDOG_USEC") }
            let service = WatchdogService(logger: Self.quiet, livenessProbe: { true })
            var received: [String] = []
            try await socket.withNotifySocket {
                let group = ServiceGroup(services: [service], logger: Self.quiet)
                try await withThrowingTaskGroup(of: Void.self) { tasks in
                    tasks.addTask { try await group.run() }
                    #expect(
                        await eventually {
                            received += socket.drain()
                            return received.count >= 3
                        })
                    await group.triggerGracefulShutdown()
                    try await tasks.waitForAll()
                }
            }
            received += socket.drain()
            #expect(received.count >= 3)
            #expect(received.allSatisfy { $0 == "WATCHDOG=1" })
        }

        @Test("without a watchdog it idles until graceful shutdown")
        func idleWithoutWatchdog() async throws {
            unsetenv("NOTIFY_SOCKET")
            unsetenv("WATCHDOG_USEC")
            let probed = Atomic<Bool>(false)
            let service = WatchdogService(
                logger: Self.quiet,
                livenessProbe: {
                    probed.store(true, ordering: .relaxed)
                    return true
                })
            let group = ServiceGroup(services: [service], logger: Self.quiet)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                try await Task.sleep(for: .milliseconds(50))
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
            let wasProbed = probed.load(ordering: .relaxed)
            #expect(!wasProbed)
        }
    }

    @Suite("ListenFDs")
    struct ListenFDsTests {
        @Test("nothing inherited without socket activation, or when meant for another process")
        func notActivated() {
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_PID")
            #expect(ListenFDs.inherited().isEmpty)
            setenv("LISTEN_FDS", "1", 1)
            setenv("LISTEN_PID", "1", 1)
            #expect(ListenFDs.inherited().isEmpty)
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_PID")
        }

        @Test("adopts descriptors from 3 on and clears the variables for children")
        func activated() throws {
            // sd_listen_fds needs fd 3 to be open; open /dev/null there if nothing else is.
            let placeholder = fcntl(3, F_GETFD) < 0 ? open("/dev/null", O_RDONLY | O_CLOEXEC) : -1
            defer { if placeholder >= 0 { close(placeholder) } }
            try #require(fcntl(3, F_GETFD) >= 0)
            setenv("LISTEN_FDS", "1", 1)
            setenv("LISTEN_PID", String(getpid()), 1)
            #expect(ListenFDs.inherited() == [3])
            #expect(getenv("LISTEN_FDS") == nil && getenv("LISTEN_PID") == nil)
            #expect(ListenFDs.inherited().isEmpty)
        }
    }
}
