public import ServiceLifecycle
public import TelemetryModel

/// Sends the ``EnrollmentFailureDigest``'s entries to the journal mirror every few seconds,
/// once their minute is over, and everything left at shutdown. Put it after the
/// ``JournalMirror`` in the service group: services stop last-to-first, so its last entries
/// are queued before the mirror flushes. The mirror's own settings apply: nothing is sent
/// while mirroring is off or its minimum level is above warning.
public struct EnrollmentFailureDigestService: Service {
    let digest: EnrollmentFailureDigest
    let mirror: JournalMirror
    let clock: any WallClock
    let interval: Duration

    public init(digest: EnrollmentFailureDigest, mirror: JournalMirror, clock: any WallClock, interval: Duration = .seconds(5)) {
        self.digest = digest
        self.mirror = mirror
        self.clock = clock
        self.interval = interval
    }

    public func run() async throws {
        while !Task.isShuttingDownGracefully, !Task.isCancelled {
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
            send(digest.drain(before: clock.nowMilliseconds()))
        }
        send(digest.drain(before: nil))
    }

    func send(_ entries: [JournalEntry]) {
        guard !entries.isEmpty, mirror.shouldMirror(level: .warning) else { return }
        mirror.submit(entries)
    }
}
