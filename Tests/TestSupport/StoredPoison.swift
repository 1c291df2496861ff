import TelemetryModel

/// Records as a version before the canonical form and the field ranges could store them (the
/// audit's poison: a status code of Int64.min, durations of 1e19, infinity and NaN, numbers
/// past a double's range, lone surrogates, duplicate members, times at the ends of Int64),
/// built directly because ingest now refuses every one. A test hands them to a store's
/// `append` and then reads them through every reader: each must answer, and parse.
public enum StoredPoison {
    public static let app = "com.contoso.poison"
    public static let device = "poison-dev"

    /// One stored event: its JSON text as the old version kept it, and its keys.
    static func event(
        _ json: String, time: Int64, name: String = EventName.enrollmentCall, detail: String = "enroll", statusCode: Int? = nil,
        durationMs: Double? = nil, succeeded: Bool? = nil
    ) -> DecodedRecord {
        DecodedRecord(
            json: Array(json.utf8),
            keys: RecordKeys(
                time: time, appId: app, deviceId: device, name: name, detail: detail, statusCode: statusCode, durationMs: durationMs,
                succeeded: succeeded),
            flags: .unspecified, eventId: nil)
    }

    /// Telemetry events, all but two (at the ends of Int64's time) within a minute of `time`.
    public static func events(around time: Int64) -> [DecodedRecord] {
        let envelope = #""appId":"\#(app)","deviceId":"\#(device)","time":"\#(Timestamp.format(milliseconds: time))""#
        return [
            event(
                #"{"name":"EnrollmentCall",\#(envelope),"data":{"operation":"enroll","statusCode":-9223372036854775808,"durationMs":1e400}}"#,
                time: time, statusCode: Int.min, durationMs: .infinity),
            event(
                #"{"name":"EnrollmentCall",\#(envelope),"data":{"operation":"enroll","statusCode":9223372036854775807,"durationMs":1e19}}"#,
                time: time + 1, statusCode: Int.max, durationMs: 1e19),
            event(
                #"{"name":"EnrollmentCall",\#(envelope),"data":{"operation":"policyCheckIn","statusCode":-9223372036854775807,"durationMs":"NaN"}}"#,
                time: time + 2, detail: "policyCheckIn", statusCode: -Int.max, durationMs: .nan, succeeded: false),
            event(
                #"{"name":"EnrollmentCall",\#(envelope),"data":{"operation":"unenroll","durationMs":-1e999999999}}"#,
                time: time + 3, detail: "unenroll", durationMs: -.infinity),
            event(
                #"{"name":"EnrollmentCall",\#(envelope),"data":{"operation":"enroll","statusCode":100,"durationMs":-1}}"#,
                time: time + 4, statusCode: 100, durationMs: -1, succeeded: true),
            event(
                #"{"name":"EnrollmentCall",\#(envelope),"data":{"operation":"enroll","operation":"unenroll","errorString":"bad \ud800 text \udc00","statusCode":200,"durationMs":-0.0},"big":123e999999999,"digits":\#(String(repeating: "9", count: 400))}"#,
                time: time + 5, statusCode: 200, durationMs: -0.0),
            event(
                #"{"name":"AppLaunch",\#(envelope),"data":{"managementType":"MAM-WE \uDBFF"}}"#,
                time: time + 6, name: EventName.appLaunch, detail: "MAM-WE \u{FFFD}"),
            event(
                #"{"name":"IntuneAction",\#(envelope),"data":{"action":"SelectiveWipe"}}"#, time: time + 7, name: EventName.intuneAction,
                detail: "SelectiveWipe"),
            // Outside every window a query can name; rolled up (into hours at Int64's ends) when stored.
            event(#"{"name":"AppLaunch","appId":"\#(app)","deviceId":"\#(device)"}"#, time: .min, name: EventName.appLaunch, detail: "MDM"),
            event(#"{"name":"AppLaunch","appId":"\#(app)","deviceId":"\#(device)"}"#, time: .max, name: EventName.appLaunch, detail: "MDM"),
        ]
    }

    /// How many of `events(around:)` lie near `time` (the others are at Int64's ends).
    public static let eventsInWindow = 8

    /// Diagnostic log records of an upload with incident `incident`, within a minute of `time`.
    public static func logs(around time: Int64, incident: String) -> [DecodedRecord] {
        func log(_ json: String, _ level: LogLevel, offset: Int64) -> DecodedRecord {
            DecodedRecord(
                json: Array(json.utf8),
                keys: RecordKeys(time: time + offset, appId: app, deviceId: device, level: level, incident: incident),
                flags: .unspecified, eventId: nil, message: "poison")
        }
        let envelope = #""appId":"\#(app)","deviceId":"\#(device)","incident":"\#(incident)""#
        return [
            log(#"{\#(envelope),"level":"verbose","message":"lone \ud800 and \udfff","n":1e400}"#, .verbose, offset: 10),
            log(#"{\#(envelope),"level":"error","message":"first","message":"second \uDE00","n":-1E+400}"#, .error, offset: 11),
            log(#"{\#(envelope),"level":"warning","message":"pair \uD83D\uDE00 kept","n":1e308}"#, .warning, offset: 12),
        ]
    }
}
