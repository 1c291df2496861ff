import TelemetryModel

/// How long and how much each environment keeps (SPEC §4). Verbose log records may carry
/// PII, so they get the shortest age by default: past it their content is scrubbed in place
/// (tombstones keep ids and order) and verbose-only batches are deleted.
public struct RetentionPolicy: Sendable, Hashable {
    public struct Limits: Sendable, Hashable {
        /// Oldest receive age kept, in seconds (nil: no age limit).
        public var eventsMaxAge: Int64?
        public var logsMaxAge: Int64?
        public var verboseLogsMaxAge: Int64?
        /// Most compressed bytes kept for this environment; the oldest batches go first.
        public var maxBytes: Int64?

        public init(eventsMaxAge: Int64?, logsMaxAge: Int64?, verboseLogsMaxAge: Int64?, maxBytes: Int64?) {
            self.eventsMaxAge = eventsMaxAge
            self.logsMaxAge = logsMaxAge
            self.verboseLogsMaxAge = verboseLogsMaxAge
            self.maxBytes = maxBytes
        }
    }

    public var prod: Limits
    public var ppe: Limits

    public init(
        prod: Limits = Limits(eventsMaxAge: 30 * 86_400, logsMaxAge: 14 * 86_400, verboseLogsMaxAge: 3 * 86_400, maxBytes: 20 << 30),
        ppe: Limits = Limits(eventsMaxAge: 7 * 86_400, logsMaxAge: 7 * 86_400, verboseLogsMaxAge: 2 * 86_400, maxBytes: 2 << 30)
    ) {
        self.prod = prod
        self.ppe = ppe
    }

    public func limits(for env: TelemetryEnvironment) -> Limits { env == .prod ? prod : ppe }
}

/// What one retention pass removed.
public struct RetentionResult: Sendable, Hashable {
    public var batches = 0
    public var records = 0
    public var bytes: Int64 = 0
    /// Verbose records whose content was scrubbed in place.
    public var verboseScrubbed = 0
}
