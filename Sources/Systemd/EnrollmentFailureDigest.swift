import Synchronization
import TelemetryModel

/// Failed enrollment calls gathered for the journal: one entry per environment, app, status
/// code and minute of arrival, carrying the number of calls and a few example devices, never
/// one entry per event (a fleet failing at 100,000 events/s would drown journald). Each entry
/// carries its code's `MESSAGE_ID` (``EnrollmentFailureMessageID``), so
/// `journalctl -x MAM_APP_ID=…` shows the catalog's explanation of the code in place.
///
/// Ingest adds the events it stored (``add(_:env:receivedAt:)``, one lock per batch);
/// ``drain(before:)`` hands out the entries of the minutes that are over. A minute holds at
/// most ``appsPerMinute`` apps per environment and code; the calls of further apps are counted
/// in one entry without an app, so a flood of made-up app ids costs bounded memory.
public final class EnrollmentFailureDigest: Sendable {
    struct Key: Hashable {
        var env: TelemetryEnvironment
        /// Empty: the apps past ``appsPerMinute`` in that minute.
        var app: String
        var code: Int?
        var minute: Int64
    }

    struct Tally {
        var calls = 0
        /// Distinct example devices, in the order they failed, at most ``examplesPerEntry``.
        var devices: [String] = []
    }

    struct State {
        var tallies: [Key: Tally] = [:]
        var appsInMinute: [Int64: Set<String>] = [:]
    }

    public static let examplesPerEntry = 3
    public static let appsPerMinute = 500
    static let minute: Int64 = 60_000

    private let state = Mutex(State())
    /// What a client string (an app or device id) looks like to a caller without the `pii`
    /// scope: the journal is read by every member of `systemd-journal` and `adm`.
    private let visible: @Sendable (String) -> String

    public init(visible: @escaping @Sendable (String) -> String) {
        self.visible = visible
    }

    /// Whether `k` is an enrollment call that failed: its own `didSucceed`, else its code's
    /// range (the rule the stats and bundles count by).
    public static func isFailedCall(_ k: RecordKeys) -> Bool {
        k.name == EventName.enrollmentCall && (k.succeeded ?? k.statusCode.map(EnrollmentStatus.isSuccess)) == false
    }

    /// Counts the failed enrollment calls among `events`, stored in `env` at `receivedAt`.
    public func add(_ events: some Sequence<RecordKeys>, env: TelemetryEnvironment, receivedAt: Int64) {
        let minute = receivedAt - receivedAt.remainderReportingOverflow(dividingBy: Self.minute).partialValue
        var local: [Key: Tally] = [:]
        for k in events where Self.isFailedCall(k) {
            var tally = local[Key(env: env, app: k.appId, code: k.statusCode, minute: minute)] ?? Tally()
            tally.calls += 1
            if tally.devices.count < Self.examplesPerEntry, !k.deviceId.isEmpty, !tally.devices.contains(k.deviceId) {
                tally.devices.append(k.deviceId)
            }
            local[Key(env: env, app: k.appId, code: k.statusCode, minute: minute)] = tally
        }
        guard !local.isEmpty else { return }
        state.withLock { s in
            for (key, tally) in local {
                var key = key
                var apps = s.appsInMinute[minute, default: []]
                if !apps.contains(key.app) {
                    if apps.count < Self.appsPerMinute {
                        apps.insert(key.app)
                        s.appsInMinute[minute] = apps
                    } else {
                        key.app = ""
                    }
                }
                var merged = s.tallies[key] ?? Tally()
                merged.calls += tally.calls
                for d in tally.devices where merged.devices.count < Self.examplesPerEntry && !merged.devices.contains(d) {
                    merged.devices.append(d)
                }
                s.tallies[key] = merged
            }
        }
    }

    /// Removes and returns the entries of every minute that ended at or before `now` (epoch
    /// ms), oldest first; with `now` nil, of every minute (at shutdown).
    public func drain(before now: Int64?) -> [JournalEntry] {
        let taken: [(Key, Tally)] = state.withLock { s in
            let due = s.tallies.filter { key, _ in now.map { key.minute + Self.minute <= $0 } ?? true }
            for key in due.keys { s.tallies[key] = nil }
            s.appsInMinute = s.appsInMinute.filter { minute, _ in now.map { minute + Self.minute > $0 } ?? false }
            return Array(due)
        }
        return taken.sorted { a, b in
            (a.0.minute, a.0.env.rawValue, a.0.app, a.0.code ?? -1) < (b.0.minute, b.0.env.rawValue, b.0.app, b.0.code ?? -1)
        }.map { key, tally in
            JournalEntry.enrollmentFailures(
                app: key.app.isEmpty ? nil : visible(key.app), env: key.env, code: key.code, minute: key.minute, calls: tally.calls,
                exampleDevices: tally.devices.map(visible))
        }
    }

    /// Minutes with calls waiting to be drained (for tests and diagnostics).
    var pendingEntries: Int { state.withLock { $0.tallies.count } }
}
