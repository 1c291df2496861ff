public import TelemetryModel

/// The storage contract every backend implements: the embedded SQLite store today, a
/// scale-out engine (ClickHouse) later. Every method that writes returns only once the data is
/// durable, which is what lets the HTTP layer promise "2xx means durable".
public protocol RecordStore: Sendable {
    /// Stores a request's records, dropping retries of a record already stored (same kind,
    /// `appId` and `eventId`; within a diagnostic upload, among the upload's own records).
    /// All or nothing across kinds and environments: when it throws, nothing of the request
    /// is stored. Returns what was done per environment and kind written.
    func append(_ request: AppendRequest) async throws -> AppendOutcomes

    func query(_ query: RecordQuery) async throws -> RecordPage

    /// Reads the page `query` would return without collecting it: each record is handed to
    /// `visit` (bytes borrowed, see `ScannedRecord`) while its batch is in memory, so a large
    /// page is never copied record by record. With `announcePageEnd`, and no `contains`
    /// filter, the page's cursor is told first (`ScanEvent.pageEnd`). Returns the cursor.
    func scan(_ query: RecordQuery, announcePageEnd: Bool, _ visit: @Sendable (ScanEvent) -> Void) async throws -> Int64?

    /// Visits the input of an event stats computation from one consistent snapshot: rollup
    /// rows for the periods of `scan.rollupGrain` (and finer) the store keeps inside the
    /// window, the keys of the matching events for the rest of it.
    func eventStats(_ scan: EventStatsScan, _ visit: @Sendable (EventStatsInput) -> Void) async throws

    /// Distinct devices and users of the enrollment calls in the window (device time,
    /// inclusive), per app and status code and among failed calls per app.
    func enrollmentReach(env: TelemetryEnvironment, since: Int64, until: Int64, app: String?) async throws -> EnrollmentReach

    /// Recomputes `env`'s rollups from its stored records (for rollups that were lost or
    /// damaged); counts of records retention removed are not recoverable.
    func rebuildRollups(env: TelemetryEnvironment) async throws -> RollupRebuildResult

    func incident(id: String) async throws -> Incident?

    /// Incidents of one environment, newest first, a page at a time.
    func incidents(_ query: IncidentQuery) async throws -> IncidentPage

    /// The devices matching what a person typed: exactly, ignoring case, by prefix, or (when
    /// none does) the nearest ids. Answered from an index of distinct devices, not a scan.
    func findDevices(_ lookup: DeviceLookup) async throws -> DeviceLookupResult

    /// The devices whose records name the user (an identity, compared lower-cased, or every
    /// identity with a pseudonym) in the device-time window, most recent first, at most
    /// `limit`: the devices a user used (in `apps` only, the caller's app binding, unless nil).
    func devices(
        usedBy user: IdentitySelector, env: TelemetryEnvironment, apps: Set<String>?, since: Int64?, until: Int64?, limit: Int
    ) async throws -> [String]

    /// The id of the newest record in `env` (0 when empty): where a follower starts.
    func latestID(env: TelemetryEnvironment) async throws -> Int64

    /// A stream of commit notices for followers; ends when the store closes.
    func commits() -> AsyncStream<CommitNotice>

    /// Bytes on disk per environment.
    func sizes() -> PerEnvironment<Int64>
}

extension RecordStore {
    /// The devices `identity` used in the window (see `devices(usedBy:env:apps:since:until:limit:)`).
    public func devices(
        usedBy identity: String, env: TelemetryEnvironment, apps: Set<String>?, since: Int64?, until: Int64?, limit: Int
    ) async throws -> [String] {
        try await devices(usedBy: .identity(identity), env: env, apps: apps, since: since, until: until, limit: limit)
    }

    /// Stores `records` of one kind in one environment (see `append(_:)`). When an incident
    /// is given it is created in the same transaction, so an incident never exists without
    /// its records or the reverse.
    public func append(
        _ records: [DecodedRecord], kind: RecordKind, env: TelemetryEnvironment, receivedAt: Int64,
        incident: Incident?
    ) async throws -> AppendOutcome {
        let outcomes = try await append(AppendRequest(kind: kind, receivedAt: receivedAt, records: [env: records], incident: incident))
        return outcomes[env, kind] ?? AppendOutcome(stored: 0, duplicates: 0, ids: [])
    }
}
