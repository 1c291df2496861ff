public import TelemetryModel

/// A page of incidents, newest first (by the time the upload arrived, then id): which
/// diagnostic uploads came in, for an app or a device, over a window.
public struct IncidentQuery: Sendable, Hashable {
    public var env: TelemetryEnvironment
    /// Upload receive time window, epoch ms inclusive.
    public var since: Int64?
    public var until: Int64?
    public var app: String?
    /// Only these apps' incidents (the caller's app binding); nil: every app.
    public var apps: Set<String>?
    public var device: String?
    public var limit: Int
    /// Resume after this incident (exclusive), in newest-first order.
    public var after: IncidentCursor?

    public init(
        env: TelemetryEnvironment = .prod, since: Int64? = nil, until: Int64? = nil, app: String? = nil, device: String? = nil,
        limit: Int = 50, after: IncidentCursor? = nil
    ) {
        self.env = env
        self.since = since
        self.until = until
        self.app = app
        self.device = device
        self.limit = limit
        self.after = after
    }

    /// Whether `i` belongs in the answer (for backends that filter in memory too).
    public func includes(_ i: Incident) -> Bool {
        if let since, i.createdAt < since { return false }
        if let until, i.createdAt > until { return false }
        if let app, i.appId != app { return false }
        if let device, i.deviceId != device { return false }
        if let after, !after.precedes(i) { return false }
        return true
    }
}

/// Where a page of incidents stopped: the last incident's receive time and id.
public struct IncidentCursor: Sendable, Hashable {
    public var createdAt: Int64
    public var id: String

    public init(createdAt: Int64, id: String) {
        self.createdAt = createdAt
        self.id = id
    }

    /// Whether `i` comes after this cursor in newest-first order.
    public func precedes(_ i: Incident) -> Bool {
        i.createdAt < createdAt || (i.createdAt == createdAt && i.id < id)
    }
}

public struct IncidentPage: Sendable, Hashable {
    public var incidents: [Incident]
    /// Pass as `after` for the next page; nil when there is none.
    public var next: IncidentCursor?

    public init(incidents: [Incident], next: IncidentCursor?) {
        self.incidents = incidents
        self.next = next
    }

    /// The page of `query` from incidents in any order: sorted newest first and cut.
    public static func cut(_ all: some Sequence<Incident>, _ query: IncidentQuery) -> IncidentPage {
        let sorted = all.filter(query.includes).sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
        let limit = max(query.limit, 0)
        let page = Array(sorted.prefix(limit))
        let next = sorted.count > limit ? page.last.map { IncidentCursor(createdAt: $0.createdAt, id: $0.id) } : nil
        return IncidentPage(incidents: page, next: next)
    }
}
