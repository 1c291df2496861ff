import Foundation

/// The names of the three event kinds the SDK emits by default (SPEC §2.1). Other names are
/// accepted and stored as they come, for forward compatibility.
public enum EventName {
    public static let appLaunch = "AppLaunch"
    public static let enrollmentCall = "EnrollmentCall"
    public static let intuneAction = "IntuneAction"
}

/// The envelope and kind-specific fields of one telemetry event, as read from the wire.
/// Only what the daemon indexes or routes on is decoded; the rest of the object is kept as
/// the client sent it.
struct WireEvent: Decodable {
    var name: String
    var time: Int64?
    var appId: String
    var deviceId: String?
    var sessionId: String?
    var identity: String?
    var eventId: String?
    var flags: AppFlags
    var statusCode: Int?
    var operation: String?
    var managementType: String?
    var action: String?
    var durationMs: Double?
    var didSucceed: Bool?

    enum Keys: String, CodingKey {
        case name, time, appId, deviceId, sessionId, identity, eventId, settings, data
        case statusCode, operation, managementType, action, durationMs, didSucceed
        case id, receivedAt, env, incident
    }

    init(from decoder: Decoder) throws {
        let top = FieldReader(container: try decoder.container(keyedBy: Keys.self), prefix: "")
        for reserved in [Keys.id, .receivedAt, .env, .incident] where top.has(reserved) {
            throw FieldError("\(reserved.stringValue) is a reserved field set by the server; rename it")
        }
        guard let name = try top.string(.name), !name.isEmpty else { throw FieldError("name is required") }
        guard let appId = try top.string(.appId), !appId.isEmpty else { throw FieldError("appId is required") }
        self.name = name
        self.appId = appId
        time = try top.time(.time)
        deviceId = try top.string(.deviceId)
        sessionId = try top.string(.sessionId)
        identity = try top.string(.identity)
        eventId = try top.string(.eventId)
        flags = try top.settings(.settings)
        // Kind-specific fields live in `data`; a flat envelope is tolerated too.
        var data: FieldReader<Keys>?
        if top.has(.data), (try? top.container.decodeNil(forKey: .data)) != true {
            guard let nested = try? top.container.nestedContainer(keyedBy: Keys.self, forKey: .data) else {
                throw FieldError("data: expected an object")
            }
            data = FieldReader(container: nested, prefix: "data.")
        }
        func pick<T>(_ read: (FieldReader<Keys>) throws -> T?) throws -> T? {
            if let data, let v = try read(data) { return v }
            return try read(top)
        }
        statusCode = try pick { try $0.int(.statusCode) }
        operation = try pick { try $0.string(.operation) }
        managementType = try pick { try $0.string(.managementType) }
        action = try pick { try $0.string(.action) }
        durationMs = try pick { try $0.double(.durationMs) }
        didSucceed = try pick { try $0.bool(.didSucceed) }
    }

    func keys(receivedAt: Int64) -> RecordKeys {
        let detail: String
        switch name {
        case EventName.appLaunch: detail = managementType ?? ""
        case EventName.enrollmentCall: detail = operation ?? ""
        case EventName.intuneAction: detail = action ?? ""
        default: detail = managementType ?? operation ?? action ?? ""
        }
        return RecordKeys(
            time: time ?? receivedAt, appId: appId, deviceId: deviceId ?? "",
            sessionId: sessionId ?? "", identity: identity?.lowercased() ?? "", name: name,
            detail: detail, statusCode: statusCode, durationMs: durationMs,
            succeeded: didSucceed ?? statusCode.map(EnrollmentStatus.isSuccess))
    }
}

/// Decodes the records of a `POST /v1/telemetry` body, line by line: valid lines become
/// `DecodedRecord`s, invalid ones `LineError`s, so one bad line never costs the others.
public struct TelemetryEventDecoder {
    public var limits: DecodeLimits

    public init(limits: DecodeLimits = .default) { self.limits = limits }

    public func decode(body: [UInt8], receivedAt: Int64) throws -> (records: [DecodedRecord], rejected: [LineError]) {
        let (elements, early) = try BodySplitter.split(body, limits: limits)
        var records: [DecodedRecord] = []
        records.reserveCapacity(elements.count)
        var rejected = early
        body.withUnsafeBufferPointer { all in
            for element in elements {
                let slice = UnsafeBufferPointer(rebasing: all[element.range])
                switch decodeOne(slice, receivedAt: receivedAt) {
                case .success(var r):
                    r.line = element.line
                    records.append(r)
                case .failure(let message): rejected.append(LineError(line: element.line, error: message.text))
                }
            }
        }
        rejected.sort { $0.line < $1.line }
        return (records, rejected)
    }

    func decodeOne(_ bytes: UnsafeBufferPointer<UInt8>, receivedAt: Int64) -> Result<DecodedRecord, Message> {
        let scanner = JSONRecordScanner(limits: limits, wantedTop: WireEvent.scanner.top, wantedData: WireEvent.scanner.data)
        let scanned: ScannedRecord
        switch scanner.scan(bytes) {
        case .success(let r): scanned = r
        case .failure(let e): return .failure(Message(e.message))
        }
        do {
            let wire = try WireEvent(scanned: scanned)
            let json = scanned.hasLayoutWhitespace ? JSONShape.compact(bytes) : Array(bytes)
            return .success(
                DecodedRecord(json: json, keys: wire.keys(receivedAt: receivedAt), flags: wire.flags, eventId: wire.eventId))
        } catch {
            return .failure(Message(describe(error)))
        }
    }
}

struct Message: Error {
    let text: String
    init(_ text: String) { self.text = text }
}
