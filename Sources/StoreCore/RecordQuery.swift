public import TelemetryModel

/// A filtered, paginated read of one kind of record in one environment. Equality
/// filters are exact except `identity`, which is compared lower-cased, and
/// `identityPseudonym`, which compares the pseudonym of the record's identity.
public struct RecordQuery: Sendable {
    public enum Order: String, Sendable, Hashable { case asc, desc }

    public var kind: RecordKind
    public var env: TelemetryEnvironment
    public var app: String?
    public var device: String?
    public var session: String?
    public var identity: String? {
        didSet { identity = identity?.lowercased() }
    }
    /// Records whose identity has this pseudonym: how a caller who is shown `user-…` in place
    /// of identities filters by one (it can never learn the identity from the answer).
    public var identityPseudonym: IdentityPseudonymFilter?
    /// Only these apps' records (a caller's app binding); nil: every app. `app` narrows
    /// further and must be one of them to match anything.
    public var apps: Set<String>?
    /// With `identity` or `identityPseudonym`, the user's story: the user's own records and
    /// the records that carry no identity from these devices (the devices the user used;
    /// device logs carry none). Records of these devices naming another identity are someone
    /// else's and stay out.
    public var identityDevices: Set<String>?
    public var name: String?
    public var statusCode: Int?
    /// Log records at or above this level.
    public var minLevel: LogLevel?
    public var incident: String?
    /// Device time window, epoch ms, inclusive.
    public var since: Int64?
    public var until: Int64?
    /// Case-insensitive substring of the record as `presenter` shows it (the stored JSON
    /// when there is no presenter).
    public var contains: String?
    /// The form the records are returned in, and `contains` matched against.
    public var presenter: (any RecordPresenter)?
    public var limit: Int
    /// Resume after this record id (exclusive), in `order`.
    public var after: Int64?
    /// Records with a higher id are left out: a follower reads no further than the newest
    /// id it was told is complete (on ClickHouse, the follow watermark), so a record that
    /// arrives late below a later id cannot be skipped.
    public var throughID: Int64?
    public var order: Order
    /// How long one read may look for matches before it ends its page early, with a cursor
    /// after the last row it read (a page that ends so may hold fewer than `limit` records, or
    /// none). nil: until `limit` matches or the end. A bundle of a device whose records are
    /// few and far apart sets it: one read over a whole store holds one snapshot for seconds,
    /// and the WAL cannot be reused behind it while ingest writes on (issue 28).
    public var readBudget: Duration?

    public init(
        kind: RecordKind, env: TelemetryEnvironment = .prod, app: String? = nil, device: String? = nil,
        session: String? = nil, identity: String? = nil, name: String? = nil, statusCode: Int? = nil,
        minLevel: LogLevel? = nil, incident: String? = nil, since: Int64? = nil, until: Int64? = nil,
        contains: String? = nil, limit: Int = 100, after: Int64? = nil, order: Order = .desc,
        presenter: (any RecordPresenter)? = nil
    ) {
        self.kind = kind
        self.env = env
        self.app = app
        self.device = device
        self.session = session
        self.identity = identity?.lowercased()
        self.name = name
        self.statusCode = statusCode
        self.minLevel = minLevel
        self.incident = incident
        self.since = since
        self.until = until
        self.contains = contains
        self.limit = limit
        self.after = after
        self.order = order
        self.presenter = presenter
    }

    /// The user this query tells the story of (`identity`, else `identityPseudonym`).
    public var identitySelector: IdentitySelector? {
        if let identity { return .identity(identity) }
        return identityPseudonym.map { .pseudonym($0) }
    }

    /// The identity filters of `matches`, the one rule both backends apply (ClickHouse applies
    /// it while reading: it cannot compute the daemon's keyed pseudonyms). A record passes
    /// when it names the user, or names no one and comes from one of `identityDevices`.
    public func matchesIdentity(_ k: RecordKeys) -> Bool {
        // Most queries name no user: they pay nothing here, per record.
        guard identity != nil || identityPseudonym != nil else { return true }
        let fromUsersDevice = k.identity.isEmpty && identityDevices?.contains(k.deviceId) == true
        if let identity, k.identity != identity, !fromUsersDevice { return false }
        if let identityPseudonym, !identityPseudonym.matches(k.identity), !fromUsersDevice { return false }
        return true
    }

    package func matches(_ k: RecordKeys) -> Bool {
        if let since, k.time < since { return false }
        if let until, k.time > until { return false }
        if let app, k.appId != app { return false }
        if let apps, !apps.contains(k.appId) { return false }
        if let device, k.deviceId != device { return false }
        if let session, k.sessionId != session { return false }
        if !matchesIdentity(k) { return false }
        if let name, k.name != name { return false }
        if let statusCode, k.statusCode != statusCode { return false }
        if let incident, k.incident != incident { return false }
        if let minLevel, (k.level ?? .info) < minLevel { return false }
        return true
    }
}

/// One stored record as read back: the server-assigned id and receive time, its keys, and
/// its JSON exactly as stored.
public struct StoredRecord: Sendable, Hashable {
    public var id: Int64
    public var receivedAt: Int64
    public var env: TelemetryEnvironment
    public var keys: RecordKeys
    public var json: [UInt8]

    public init(id: Int64, receivedAt: Int64, env: TelemetryEnvironment, keys: RecordKeys, json: [UInt8]) {
        self.id = id
        self.receivedAt = receivedAt
        self.env = env
        self.keys = keys
        self.json = json
    }
}

public struct RecordPage: Sendable {
    public var records: [StoredRecord]
    /// Pass as `after` to read the next page; nil when there is none.
    public var nextAfter: Int64?

    public init(records: [StoredRecord], nextAfter: Int64?) {
        self.records = records
        self.nextAfter = nextAfter
    }
}

/// What an append did with the records it was given.
public struct AppendOutcome: Sendable, Hashable {
    public var stored: Int
    /// Records whose (`appId`, `eventId`) was already stored: a client retry.
    public var duplicates: Int
    /// Ids given to the stored records, in order.
    public var ids: [Int64]
    /// Positions (in the appended array) of the records dropped as duplicates.
    public var duplicateIndices: [Int] = []

    public init(stored: Int, duplicates: Int, ids: [Int64], duplicateIndices: [Int] = []) {
        self.stored = stored
        self.duplicates = duplicates
        self.ids = ids
        self.duplicateIndices = duplicateIndices
    }
}

/// Told to followers after each commit so `follow=true` streams wake up.
public struct CommitNotice: Sendable, Hashable {
    public var env: TelemetryEnvironment
    public var kinds: Set<RecordKind>
    public var lastId: Int64

    public init(env: TelemetryEnvironment, kinds: Set<RecordKind>, lastId: Int64) {
        self.env = env
        self.kinds = kinds
        self.lastId = lastId
    }
}
