import ControlState
import TelemetryModel

/// The one place the MAM privacy flags are decided for ingest: a record's own flags against
/// the app registry's. `MAMTelemetryDisabled` drops a record before it touches disk (unless
/// the user chose to share it), `MAMTelemetryUsePPE` sends it to the PPE store, never prod.
/// One instance per request, so the registry is read once per app.
struct PrivacyRouting {
    let registry: AppRegistry
    private var cache: [String: AppFlags?] = [:]

    init(registry: AppRegistry) {
        self.registry = registry
    }

    /// The registry's flags for `appId`.
    mutating func registered(_ appId: String) -> AppFlags? {
        if let cached = cache[appId] { return cached }
        let flags = registry.flags(for: appId)
        cache[appId] = flags
        return flags
    }

    mutating func decide(_ flags: AppFlags, appId: String, userInitiated: Bool) -> PrivacyDecision {
        PrivacyDecision.resolve(record: flags, registry: registered(appId), userInitiated: userInitiated)
    }

    /// Where each record goes, and what was dropped (per app, for the drop ledger).
    struct Routed {
        var byEnv: [TelemetryEnvironment: [DecodedRecord]] = [:]
        var dropped: [DropReason: Int] = [:]
        var optedOutByApp: [String: Int] = [:]
        /// Apps the registry marks opted-out that appeared (kill-switch header).
        var killedApps: Set<String> = []
    }

    mutating func route(_ records: [DecodedRecord], userInitiated: Bool) -> Routed {
        var routed = Routed()
        for record in records {
            let appId = record.keys.appId
            if registered(appId)?.telemetryDisabled == true { routed.killedApps.insert(appId) }
            switch decide(record.flags, appId: appId, userInitiated: userInitiated) {
            case .store(let env): routed.byEnv[env, default: []].append(record)
            case .drop(let reason):
                routed.dropped[reason, default: 0] += 1
                routed.optedOutByApp[appId, default: 0] += 1
            }
        }
        return routed
    }
}
