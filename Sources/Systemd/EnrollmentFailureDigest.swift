import Synchronization
public import TelemetryModel

/// Failed enrollment calls gathered for the journal: one entry per environment, app, status
/// code and minute of arrival, carrying the number of calls and a few example devices, never
/// one entry per event (a fleet failing at 100,000 events/s would drown journald). Each entry
/// carries its code's `MESSAGE_ID` (``EnrollmentFailureMessageID``), so
/// `journalctl -x MAM_APP_ID=…` shows the catalog's explanation of the code in place.
///
/// Ingest adds the events it stored (``add(_:env:receivedAt:)``, one lock per batch);
/// ``drain(before:)`` hands out the entries of the minutes that are over. Both client-chosen
/// parts of the key are bounded, so a flood of made-up values costs bounded memory and
/// entries: a minute holds at most ``appsPerMinute`` apps per environment and code (the calls
/// of further apps are counted in one entry without an app), and the codes an app reports in
/// a minute are the documented ones, each with its own entry, plus one entry for every
/// undocumented code together (naming a few of them) and one for calls without a code.
public final class EnrollmentFailureDigest: Sendable {
    struct Key: Hashable {
        var env: TelemetryEnvironment
        /// Empty: the apps past ``appsPerMinute`` in that minute.
        var app: String
        var code: Code
        var minute: Int64
    }

    /// A status code as the digest keys it: the SDK's documented codes each on their own,
    /// every other code together.
    enum Code: Hashable {
        case none
        case documented(Int)
        case undocumented

        init(_ code: Int?) {
            guard let code else {
                self = .none
                return
            }
            self = EnrollmentStatus.explanation(of: code) == nil ? .undocumented : .documented(code)
        }

        /// For ordering entries: no code first, the documented codes by number, then the rest.
        var rank: Int {
            switch self {
            case .none: -1
            case .documented(let c): c
            case .undocumented: .max
            }
        }
    }

    struct Tally {
        var calls = 0
        /// Distinct example devices, in the order they failed, at most ``examplesPerEntry``.
        var devices: [String] = []
        /// For the undocumented codes' entry: distinct codes seen, at most ``examplesPerEntry``.
        var codes: [Int] = []
        /// More undocumented codes were seen than `codes` names.
        var moreCodes = false

        mutating func note(device: String) {
            if devices.count < EnrollmentFailureDigest.examplesPerEntry, !device.isEmpty, !devices.contains(device) {
                devices.append(device)
            }
        }

        mutating func note(code: Int?) {
            guard let code, !codes.contains(code) else { return }
            if codes.count < EnrollmentFailureDigest.examplesPerEntry { codes.append(code) } else { moreCodes = true }
        }
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
            let key = Key(env: env, app: k.appId, code: Code(k.statusCode), minute: minute)
            var tally = local[key] ?? Tally()
            tally.calls += 1
            tally.note(device: k.deviceId)
            if key.code == .undocumented { tally.note(code: k.statusCode) }
            local[key] = tally
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
                for d in tally.devices { merged.note(device: d) }
                for c in tally.codes { merged.note(code: c) }
                merged.moreCodes = merged.moreCodes || tally.moreCodes
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
            (a.0.minute, a.0.env.rawValue, a.0.app, a.0.code.rank) < (b.0.minute, b.0.env.rawValue, b.0.app, b.0.code.rank)
        }.map { key, tally in
            let app = key.app.isEmpty ? nil : visible(key.app)
            let devices = tally.devices.map(visible)
            switch key.code {
            case .none:
                return JournalEntry.enrollmentFailures(
                    app: app, env: key.env, code: nil, minute: key.minute, calls: tally.calls, exampleDevices: devices)
            case .documented(let code):
                return JournalEntry.enrollmentFailures(
                    app: app, env: key.env, code: code, minute: key.minute, calls: tally.calls, exampleDevices: devices)
            case .undocumented:
                return JournalEntry.enrollmentFailures(
                    app: app, env: key.env, undocumentedCodes: tally.codes, moreCodes: tally.moreCodes, minute: key.minute,
                    calls: tally.calls, exampleDevices: devices)
            }
        }
    }

    /// Minutes with calls waiting to be drained (for tests and diagnostics).
    var pendingEntries: Int { state.withLock { $0.tallies.count } }
}
