import Foundation

/// The names of the three event kinds the SDK emits by default. Other names are
/// accepted and stored as they come, for forward compatibility.
public enum EventName {
    public static let appLaunch = "AppLaunch"
    public static let enrollmentCall = "EnrollmentCall"
    public static let intuneAction = "IntuneAction"
}

/// The envelope and kind-specific fields of one telemetry event, as read from the wire by
/// `JSONRecordScanner` (see `ScannedFields.swift`). Only what the daemon indexes or routes on
/// is read; the rest of the object is kept as the client sent it.
struct WireEvent {
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
        let scanner = JSONRecordScanner(limits: limits, wantedTop: WireEvent.scanner.top, wantedData: WireEvent.scanner.data)
        var scratch = JSONRecordScanner.Cursor.Scratch()
        body.withUnsafeBufferPointer { all in
            for element in elements {
                let slice = UnsafeBufferPointer(rebasing: all[element.range])
                switch decodeOne(slice, receivedAt: receivedAt, scanner: scanner, scratch: &scratch) {
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

    func decodeOne(
        _ bytes: UnsafeBufferPointer<UInt8>, receivedAt: Int64, scanner: JSONRecordScanner, scratch: inout JSONRecordScanner.Cursor.Scratch
    ) -> Result<DecodedRecord, Message> {
        let scanned: ScannedRecord
        switch scanner.scan(bytes, scratch: &scratch) {
        case .success(let r): scanned = r
        case .failure(let e): return .failure(Message(e.message))
        }
        do {
            let wire = try WireEvent(scanned: scanned)
            return .success(
                DecodedRecord(
                    json: scanned.canonical(bytes), keys: wire.keys(receivedAt: receivedAt), flags: wire.flags, eventId: wire.eventId))
        } catch {
            return .failure(Message(describe(error)))
        }
    }
}

struct Message: Error {
    let text: String
    init(_ text: String) { self.text = text }
}
