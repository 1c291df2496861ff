import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A long-lived child (a daemon, the journald harness, `systemd-socket-activate`) spawned
/// with `posix_spawn` and reaped with `waitpid` on its own pid.
///
/// Why not Foundation's `Process`: on Linux it learns that a child ended when a socket it
/// shares with the child reaches end-of-file, and that socket is created without
/// close-on-exec. A second child spawned concurrently from another test can inherit it, and
/// then the first child's exit is never noticed (`isRunning` stays true, `waitUntilExit()`
/// never returns) until the second one exits too. Under a parallel test run that held a
/// killed daemon "running" for the rest of the suite. Here the exit status comes from
/// `waitpid(pid)` alone, and the child starts with every descriptor above stderr closed, so
/// it cannot hold another child's socket either.
public final class ChildProcess: Sendable {
    public enum TerminationReason: Sendable, Equatable { case exit, uncaughtSignal }

    public let processIdentifier: pid_t
    /// The raw `waitpid` status once reaped.
    private let reaped = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments` and exactly `environment`. Standard input is
    /// `/dev/null`; output goes to the given descriptors (the test's own when `nil`).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String],
        standardOutput: Int32? = nil, standardError: Int32? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let standardOutput { posix_spawn_file_actions_adddup2(&actions, standardOutput, 1) }
        if let standardError { posix_spawn_file_actions_adddup2(&actions, standardError, 2) }
        guard Self.addCloseFrom(&actions, 3) == 0 else { throw POSIXError(.ENOSYS) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, as Foundation does: a signal meant for the test runner's
        // group does not reach the children, and the test decides when they stop.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2] { sigaddset(&defaults, signal) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EINVAL) }
        processIdentifier = pid
    }

    /// Whether the child has not ended yet (reaps it when it has).
    public var isRunning: Bool { status == nil }

    /// The exit code, or the signal number that ended it (as `Process` reports it).
    public var terminationStatus: Int32 {
        guard let status else { preconditionFailure("terminationStatus read while the child runs") }
        return Self.exited(status) ? (status >> 8) & 0xff : status & 0x7f
    }

    public var terminationReason: TerminationReason {
        guard let status else { preconditionFailure("terminationReason read while the child runs") }
        return Self.exited(status) ? .exit : .uncaughtSignal
    }

    public func signal(_ signal: Int32) { if isRunning { kill(processIdentifier, signal) } }

    public func terminate() { signal(SIGTERM) }

    /// Waits until the child ends; `false` when `timeout` passed first.
    @discardableResult
    public func wait(timeout: Duration = .seconds(30)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while isRunning {
            guard ContinuousClock.now < deadline else { return false }
            usleep(5_000)
        }
        return true
    }

    /// Waits for the end without a limit, for callers that used `Process.waitUntilExit()`.
    public func waitUntilExit() { while isRunning { usleep(5_000) } }

    /// Signals, waits `timeout`, then SIGKILLs and waits again: the child is gone after.
    public func stop(signal first: Int32 = SIGTERM, timeout: Duration = .seconds(30)) {
        signal(first)
        if !wait(timeout: timeout) {
            signal(SIGKILL)
            wait(timeout: .seconds(30))
        }
    }

    private var status: Int32? {
        reaped.withLock { reaped in
            if reaped == nil {
                var status: Int32 = 0
                if waitpid(processIdentifier, &status, WNOHANG) == processIdentifier { reaped = status }
            }
            return reaped
        }
    }

    private static func exited(_ status: Int32) -> Bool { status & 0x7f == 0 }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+) is not in Swift's Glibc
    /// module (it is behind `_GNU_SOURCE`), so it is looked up at run time.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ low: Int32) -> Int32 {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return ENOSYS }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)(actions, low)
    }
}
