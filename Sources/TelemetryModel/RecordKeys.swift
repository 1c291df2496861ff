/// The fields of a record that queries filter on and stats aggregate, pulled out once at
/// ingest so the store can index and scan them without re-parsing the JSON payload.
public struct RecordKeys: Sendable, Hashable {
    /// Device-side time of the record (epoch ms); the receive time when the device sent none.
    public var time: Int64
    public var appId: String
    public var deviceId: String
    public var sessionId: String
    /// Lower-cased: identities are case-insensitive (the SDK may return another casing).
    public var identity: String
    /// Event name (`EnrollmentCall`, ...) for events; empty for log records.
    public var name: String
    /// The kind-specific dimension: management type (AppLaunch), operation
    /// (EnrollmentCall), action (IntuneAction), component (log records).
    public var detail: String
    public var statusCode: Int?
    public var durationMs: Double?
    public var succeeded: Bool?
    public var level: LogLevel?
    /// Incident short id, for records that arrived with a diagnostic upload.
    public var incident: String

    public init(
        time: Int64, appId: String, deviceId: String = "", sessionId: String = "",
        identity: String = "", name: String = "", detail: String = "", statusCode: Int? = nil,
        durationMs: Double? = nil, succeeded: Bool? = nil, level: LogLevel? = nil,
        incident: String = ""
    ) {
        self.time = time
        self.appId = appId
        self.deviceId = deviceId
        self.sessionId = sessionId
        self.identity = identity
        self.name = name
        self.detail = detail
        self.statusCode = statusCode
        self.durationMs = durationMs
        self.succeeded = succeeded
        self.level = level
        self.incident = incident
    }
}

/// One record ready to store: its JSON bytes exactly as they will be kept (one line, no
/// trailing newline), its index keys, the flags it carried, and its client dedup id.
public struct DecodedRecord: Sendable {
    public var json: [UInt8]
    public var keys: RecordKeys
    public var flags: AppFlags
    public var eventId: String?
    /// The log message text (log records only), kept so the journald mirror need not
    /// parse the JSON again.
    public var message: String?
    /// Where the record stood in its request (line or array position), for refusals
    /// decided after decoding (e.g. an ingest token not bound to the record's app).
    public var line: Int = 0

    public init(json: [UInt8], keys: RecordKeys, flags: AppFlags, eventId: String?, message: String? = nil) {
        self.json = json
        self.keys = keys
        self.flags = flags
        self.eventId = eventId
        self.message = message
    }
}

/// A line (or array element) that could not be accepted, with a reason a person can act on.
public struct LineError: Error, Sendable, Hashable, Codable {
    public var line: Int
    public var error: String

    public init(line: Int, error: String) {
        self.line = line
        self.error = error
    }
}

extension DecodedRecord {
    /// The memory the record holds while ingest has it: its slot in an array, its JSON, and
    /// the heap text of its keys, dedup id and message. Ingest charges it to the request's
    /// in-flight budget once a body is decoded, so the budget bounds what a daemon behind its
    /// clients holds, not only the bodies' bytes (decoded, a 465-byte event holds about twice
    /// that).
    public var heldBytes: Int {
        var total = MemoryLayout<DecodedRecord>.stride + Self.heapBlock(json.count)
        total += Self.heapText(keys.appId) + Self.heapText(keys.deviceId) + Self.heapText(keys.sessionId)
        total += Self.heapText(keys.identity) + Self.heapText(keys.name) + Self.heapText(keys.detail)
        total += Self.heapText(keys.incident)
        if let eventId { total += Self.heapText(eventId) }
        if let message { total += Self.heapText(message) }
        return total
    }

    /// A heap block of `bytes` payload: Swift's 32-byte object header and glibc's 8-byte chunk
    /// header, rounded up to glibc's 16-byte granule.
    static func heapBlock(_ bytes: Int) -> Int { (bytes + 32 + 8 + 15) & ~15 }

    /// A string's heap block, or nothing when it fits inline (15 UTF-8 bytes on 64-bit).
    static func heapText(_ text: String) -> Int { text.utf8.count > 15 ? heapBlock(text.utf8.count) : 0 }
}
