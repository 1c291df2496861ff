/// Why a record was not stored, as counted in metrics and ingest answers.
public enum DropReason: String, Sendable, Hashable, CaseIterable, Codable {
    case telemetryDisabled
    case duplicate
}

/// What happens to one record once its flags are known.
public enum PrivacyDecision: Sendable, Hashable {
    /// Keep it, in this environment's store.
    case store(TelemetryEnvironment)
    /// Drop it before it touches disk; only a counter remembers it.
    case drop(DropReason)

    /// Resolves the record's own flags against the app registry's. The conservative value
    /// wins: either source saying "disabled" drops, either saying "PPE" routes to PPE.
    /// A user-initiated diagnostic upload is the user's explicit choice to share, so it is
    /// kept even when telemetry is disabled, but PPE routing still applies.
    public static func resolve(
        record: AppFlags, registry: AppFlags?, userInitiated: Bool = false
    ) -> PrivacyDecision {
        let flags = record.merged(with: registry ?? .unspecified)
        if flags.telemetryDisabled == true && !userInitiated {
            return .drop(.telemetryDisabled)
        }
        return .store(flags.usePPE == true ? .ppe : .prod)
    }
}
