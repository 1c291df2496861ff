import Foundation

/// Values that apply to every record of a log upload when a line does not carry them
/// itself: `/v1/logs?app=..&device=..` for console exports, and the metadata of a
/// diagnostic upload (which also stamps its incident id on each record).
public struct LogDefaults: Sendable, Hashable {
    public var appId: String?
    public var deviceId: String?
    public var sessionId: String?
    public var identity: String?
    public var incident: String?
    public var flags: AppFlags

    public init(
        appId: String? = nil, deviceId: String? = nil, sessionId: String? = nil,
        identity: String? = nil, incident: String? = nil, flags: AppFlags = .unspecified
    ) {
        self.appId = appId
        self.deviceId = deviceId
        self.sessionId = sessionId
        self.identity = identity
        self.incident = incident
        self.flags = flags
    }
}

/// One diagnostic log record as read from NDJSON, by the same single-pass
/// scanner and field rules as telemetry events.
struct WireLogRecord {
    var time: Int64?
    var level: LogLevel
    var message: String
    var component: String?
    var appId: String?
    var deviceId: String?
    var sessionId: String?
    var identity: String?
    var eventId: String?
    var flags: AppFlags

    static let wanted: Set<String> = [
        "time", "level", "message", "component", "category", "appId", "deviceId", "sessionId", "identity",
        "eventId", "settings", "id", "receivedAt", "env", "incident",
    ]

    init(scanned record: ScannedRecord) throws {
        let r = ScannedFields(values: record.top, prefix: "")
        for reserved in ["id", "receivedAt", "env", "incident"] where r.has(reserved) {
            throw FieldError("\(reserved) is a reserved field set by the server; rename it")
        }
        guard let message = try r.string("message") else { throw FieldError("message is required") }
        self.message = message
        if let name = try r.string("level") {
            guard let level = LogLevel(name: name) else {
                throw FieldError("level: \"\(name)\" is not one of verbose, info, warning, error")
            }
            self.level = level
        } else {
            level = .info
        }
        time = try r.time("time")
        component = try r.string("component") ?? r.string("category")
        appId = try r.string("appId")
        deviceId = try r.string("deviceId")
        sessionId = try r.string("sessionId")
        identity = try r.string("identity")
        eventId = try r.string("eventId")
        flags = try ScannedFields.settings(record)
    }
}

/// Decodes `POST /v1/logs` and diagnostic-upload bodies: NDJSON records or console-export
/// text lines, with request-level defaults filled into records that lack them.
public struct LogRecordDecoder {
    public var limits: DecodeLimits

    public init(limits: DecodeLimits = .default) { self.limits = limits }

    /// NDJSON or a JSON array of log records.
    public func decodeJSON(body: [UInt8], defaults: LogDefaults, receivedAt: Int64) throws -> (
        records: [DecodedRecord], rejected: [LineError]
    ) {
        let (elements, early) = try BodySplitter.split(body, limits: limits)
        var records: [DecodedRecord] = []
        records.reserveCapacity(elements.count)
        var rejected = early
        let scanner = JSONRecordScanner(limits: limits, wantedTop: WireLogRecord.wanted, wantedData: [])
        var scratch = JSONRecordScanner.Cursor.Scratch()
        body.withUnsafeBufferPointer { all in
            for element in elements {
                let slice = UnsafeBufferPointer(rebasing: all[element.range])
                switch decodeOne(slice, defaults: defaults, receivedAt: receivedAt, scanner: scanner, scratch: &scratch) {
                case .success(var r):
                    r.line = element.line
                    records.append(r)
                case .failure(let m): rejected.append(LineError(line: element.line, error: m.text))
                }
            }
        }
        rejected.sort { $0.line < $1.line }
        return (records, rejected)
    }

    /// Console-export text: one record per entry (`TextExport`: a line with a leading
    /// timestamp and the lines that continue it); text before the first entry is kept as
    /// `info` records with the raw text, never dropped.
    public func decodeText(body: [UInt8], defaults: LogDefaults, receivedAt: Int64) throws -> (
        records: [DecodedRecord], rejected: [LineError]
    ) {
        guard defaults.appId?.isEmpty == false else {
            throw RequestLimitError.missingParameter(
                name: "app", hint: "text/plain logs need the app id: pass ?app=<bundle id> or the X-MAM-App-Id header")
        }
        let (entries, rejected) = TextExport.entries(body, maxEntryBytes: limits.maxLineBytes)
        if entries.count + rejected.count > limits.maxRecordsPerRequest {
            throw RequestLimitError.tooManyRecords(
                limit: limits.maxRecordsPerRequest, held: entries.count + rejected.count, advice: RequestLimitError.splitAdvice)
        }
        let records = entries.map { entry in
            var record = build(
                time: entry.time ?? receivedAt, level: entry.level, message: entry.message, component: entry.component,
                defaults: defaults)
            record.line = entry.line
            return record
        }
        return (records, rejected)
    }

    func decodeOne(
        _ bytes: UnsafeBufferPointer<UInt8>, defaults: LogDefaults, receivedAt: Int64, scanner: JSONRecordScanner,
        scratch: inout JSONRecordScanner.Cursor.Scratch
    ) -> Result<DecodedRecord, Message> {
        let scanned: ScannedRecord
        switch scanner.scan(bytes, scratch: &scratch) {
        case .success(let r): scanned = r
        case .failure(let e): return .failure(Message(e.message))
        }
        let wire: WireLogRecord
        do {
            wire = try WireLogRecord(scanned: scanned)
        } catch {
            return .failure(Message(describe(error)))
        }
        guard let appId = wire.appId ?? defaults.appId, !appId.isEmpty else {
            return .failure(Message("appId is required (in the record, ?app= or X-MAM-App-Id)"))
        }
        // Fill in what the request said for the whole upload, so the stored record is complete:
        // in place of a member the record left `null` (one name, one member), else in front.
        var edits = scanned.edits
        var w = JSONWriter(capacity: 96)
        func fill(_ key: String, _ value: String?, given: String?) {
            guard given == nil, let value else { return }
            if let null = scanned.nulls[key] {
                edits.append(JSONEdit(range: null, replacement: JSONWriter.quoted(value)))
            } else {
                w.field(key, value)
            }
        }
        fill("appId", appId, given: wire.appId)
        fill("deviceId", defaults.deviceId, given: wire.deviceId)
        fill("sessionId", defaults.sessionId, given: wire.sessionId)
        fill("identity", defaults.identity, given: wire.identity)
        if let incident = defaults.incident { w.field("incident", incident) }
        if edits.count > scanned.edits.count { edits.sort { $0.range.lowerBound < $1.range.lowerBound } }
        var json = edits.isEmpty ? Array(bytes) : JSONEdit.apply(edits, to: bytes)
        if !w.bytes.isEmpty { json = JSONSplice.prepend(w.bytes, to: json) }
        let keys = RecordKeys(
            time: wire.time ?? receivedAt, appId: appId,
            deviceId: wire.deviceId ?? defaults.deviceId ?? "",
            sessionId: wire.sessionId ?? defaults.sessionId ?? "",
            identity: (wire.identity ?? defaults.identity ?? "").lowercased(),
            detail: wire.component ?? "", level: wire.level, incident: defaults.incident ?? "")
        return .success(
            DecodedRecord(
                json: json, keys: keys, flags: wire.flags.merged(with: defaults.flags), eventId: wire.eventId,
                message: wire.message))
    }

    /// Builds the stored JSON for a record the daemon parsed out of text.
    func build(time: Int64, level: LogLevel, message: String, component: String?, defaults: LogDefaults) -> DecodedRecord {
        var w = JSONWriter(capacity: message.utf8.count + 160)
        w.beginObject()
        w.field("time", Timestamp.format(milliseconds: time))
        w.field("level", level.name)
        w.field("message", message)
        if let component { w.field("component", component) }
        let appId = defaults.appId ?? ""
        w.field("appId", appId)
        if let d = defaults.deviceId { w.field("deviceId", d) }
        if let s = defaults.sessionId { w.field("sessionId", s) }
        if let u = defaults.identity { w.field("identity", u) }
        if let i = defaults.incident { w.field("incident", i) }
        w.endObject()
        let keys = RecordKeys(
            time: time, appId: appId, deviceId: defaults.deviceId ?? "", sessionId: defaults.sessionId ?? "",
            identity: (defaults.identity ?? "").lowercased(), detail: component ?? "", level: level,
            incident: defaults.incident ?? "")
        return DecodedRecord(json: w.bytes, keys: keys, flags: defaults.flags, eventId: nil, message: message)
    }
}
