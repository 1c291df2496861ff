import Foundation
import OTLP
import TelemetryModel
import Testing

/// The OTLP → native record mapping of the README's table, record by record.
@Suite struct OTLPMappingTests {
    let decoder = OTLPLogsDecoder()

    func decode(_ r: PBRequest) throws -> OTLPBatch {
        try decoder.decode(try r.protobuf, encoding: .protobuf, receivedAt: 7)
    }

    @Test func logRecordTakesIdentityFromItsResourceAndKeepsAttributesAsFields() throws {
        let record = logRecord(
            body: .string("token expired"), severity: 17, timeNanos: sampleNanos,
            attributes: [
                ("session.id", .string("sess-9")), ("enduser.id", .string("Jane@Contoso.com")),
                ("log.record.uid", .string("uid-1")), ("thread.name", .string("main")), ("retry", .int(3)),
                ("ratio", .double(0.5)), ("cached", .bool(false)), ("tags", .array([.string("a"), .int(1)])),
                ("http", .kvlist([("status", .int(401))])), ("blob", .bytes([0xDE, 0xAD])),
            ],
            traceID: Array(0..<16), spanID: Array(16..<24))
        let batch = try decode(request(resourceLogs(mailResource, [("Enrollment", [record])])))
        #expect(batch.rejected.isEmpty)
        #expect(batch.events.isEmpty)
        let log = try #require(batch.logs.first)
        #expect(
            log.keys
                == RecordKeys(
                    time: 1_795_256_130_123, appId: "com.contoso.mail", deviceId: "dev-1", sessionId: "sess-9",
                    identity: "jane@contoso.com", detail: "Enrollment", level: .error))
        #expect(log.eventId == "uid-1")
        #expect(log.message == "token expired")
        #expect(log.line == 1)
        let json = try object(log)
        #expect(json["time"] as? String == sampleTime)
        #expect(json["level"] as? String == "error")
        #expect(json["component"] as? String == "Enrollment")
        #expect(json["appVersion"] as? String == "4.2411.0")
        #expect(json["identity"] as? String == "Jane@Contoso.com")
        #expect(json["thread.name"] as? String == "main")
        #expect(json["retry"] as? Int == 3)
        #expect(json["ratio"] as? Double == 0.5)
        #expect(json["cached"] as? Bool == false)
        #expect((json["tags"] as? [Any])?.count == 2)
        #expect((json["http"] as? [String: Any])?["status"] as? Int == 401)
        #expect(json["blob"] as? String == "3q0=")
        #expect(json["traceId"] as? String == "000102030405060708090a0b0c0d0e0f")
        #expect(json["spanId"] as? String == "1011121314151617")
        // Consumed attributes are not repeated as free fields; the rest of the resource is kept.
        #expect(json["session.id"] == nil && json["log.record.uid"] == nil && json["service.name"] == nil)
        #expect(json["resource"] as? [String: String] == ["telemetry.sdk.language": "swift"])
    }

    @Test(arguments: [
        (1, "", LogLevel.verbose), (4, "", .verbose), (5, "DEBUG", .verbose), (8, "", .verbose), (9, "", .info),
        (12, "", .info), (13, "", .warning), (16, "", .warning), (17, "", .error), (21, "FATAL", .error), (24, "", .error),
        (0, "WARN", .warning), (0, "Warning", .warning), (0, "TRACE", .verbose), (0, "Debug2", .verbose),
        (0, "CRITICAL", .error), (0, "Information", .info), (0, "", .info), (0, "loud", .info),
    ])
    func severityBecomesTheSDKLevel(number: Int, text: String, level: LogLevel) throws {
        let batch = try decode(
            request(resourceLogs(mailResource, [("", [logRecord(body: .string("m"), severity: number, severityText: text)])])))
        #expect(batch.logs.first?.keys.level == level)
    }

    @Test func bodyOtherThanStringIsKeptAsJSONText() throws {
        let records = [
            logRecord(body: .kvlist([("op", .string("enroll")), ("ms", .int(812))])),
            logRecord(body: .int(42)),
            logRecord(),
        ]
        let batch = try decode(request(resourceLogs(mailResource, [("", records)])))
        #expect(batch.logs.map(\.message) == [#"{"op":"enroll","ms":812}"#, "42", ""])
        // No scope name: no component; no time: the receive time.
        #expect(batch.logs[2].keys.detail == "")
        #expect(batch.logs[2].keys.time == 7)
    }

    @Test func observedTimeStandsInForAMissingTimestamp() throws {
        let batch = try decode(request(resourceLogs(mailResource, [("", [logRecord(body: .string("m"), observedNanos: sampleNanos)])])))
        #expect(batch.logs.first?.keys.time == 1_795_256_130_123)
    }

    @Test func mamEventNamesMakeTelemetryEventsWithDataFromAttributes() throws {
        let records = [
            logRecord(
                eventName: "EnrollmentCall",
                attributes: [
                    ("operation", .string("enroll")), ("statusCode", .int(200)), ("durationMs", .int(812)),
                    ("didSucceed", .bool(false)), ("log.record.uid", .string("e-1")),
                ]),
            logRecord(
                body: .kvlist([("note", .string("cold"))]),
                attributes: [
                    ("event.name", .string("AppLaunch")), ("managementType", .string("MAM-WE")),
                ]),
            logRecord(
                body: .string("user tapped"), eventName: "device.app.lifecycle", attributes: [("event.name", .string("IntuneAction"))]),
            logRecord(body: .string("other"), attributes: [("event.name", .string("browser.click"))]),
        ]
        let batch = try decode(request(resourceLogs(mailResource + [("session.id", .string("s-1"))], [("mam", records)])))
        #expect(batch.rejected.isEmpty)
        #expect(batch.events.map(\.line) == [1, 2])
        #expect(batch.logs.map(\.line) == [3, 4])

        let enrollment = batch.events[0]
        #expect(enrollment.keys.name == "EnrollmentCall")
        #expect(enrollment.keys.detail == "enroll")
        #expect(enrollment.keys.statusCode == 200)
        #expect(enrollment.keys.succeeded == false)
        #expect(enrollment.keys.durationMs == 812)
        #expect(enrollment.keys.sessionId == "s-1")
        #expect(enrollment.eventId == "e-1")
        let json = try object(enrollment)
        #expect(
            String(decoding: enrollment.json, as: UTF8.self).contains(
                #""data":{"operation":"enroll","statusCode":200,"durationMs":812,"didSucceed":false}"#))
        #expect(json["level"] == nil && json["message"] == nil)

        let launch = try object(batch.events[1])
        #expect(launch["name"] as? String == "AppLaunch")
        #expect(launch["data"] as? [String: String] == ["managementType": "MAM-WE"])
        #expect(launch["body"] as? [String: String] == ["note": "cold"])
        #expect(batch.events[1].keys.detail == "MAM-WE")

        // An event name the SDK does not define stays a log record; `event.name` is kept
        // as an attribute, and the record's own EventName under `eventName`.
        let lifecycle = try object(batch.logs[0])
        #expect(lifecycle["eventName"] as? String == "device.app.lifecycle")
        // The record's EventName wins over the attribute, which stays a plain attribute.
        #expect(lifecycle["event.name"] as? String == "IntuneAction")
        let click = try object(batch.logs[1])
        #expect(click["event.name"] as? String == "browser.click")
    }

    @Test func anEventsEmptyBodyIsNotStored() throws {
        // The Python SDK sends a set but empty body with its events.
        var record = logRecord(eventName: "IntuneAction", attributes: [("action", .string("PinPrompt"))])
        record.body = PBAnyValue()
        let batch = try decode(request(resourceLogs(mailResource, [("", [record])])))
        let json = try object(try #require(batch.events.first))
        #expect(json.keys.sorted() == ["appId", "appVersion", "data", "deviceId", "name", "resource"])
    }

    @Test func flagsComeFromAttributesAndTheConservativeValueWins() throws {
        func flags(record: [(String, Attr)], resource: [(String, Attr)]) throws -> AppFlags? {
            let batch = try decode(
                request(resourceLogs(mailResource + resource, [("", [logRecord(body: .string("m"), attributes: record)])])))
            return batch.logs.first?.flags
        }
        #expect(try flags(record: [], resource: []) == .unspecified)
        #expect(try flags(record: [("mam.telemetry_disabled", .bool(true))], resource: []) == AppFlags(telemetryDisabled: true))
        #expect(try flags(record: [], resource: [("mam.use_ppe", .string("YES"))]) == AppFlags(usePPE: true))
        #expect(try flags(record: [("mam.use_ppe", .int(0))], resource: []) == AppFlags(usePPE: false))
        // The record says "not disabled", its resource says disabled: disabled.
        #expect(
            try flags(record: [("mam.telemetry_disabled", .bool(false))], resource: [("mam.telemetry_disabled", .string("true"))])
                == AppFlags(telemetryDisabled: true))
        // A value that is no flag is "not said", like in a native settings object.
        #expect(try flags(record: [("mam.use_ppe", .string("maybe"))], resource: []) == AppFlags(usePPE: nil))
    }

    @Test func recordsWithoutAnAppOrWithConflictingAttributesAreRefusedByPosition() throws {
        let good = logRecord(body: .string("ok"))
        let batch = try decode(
            request(
                resourceLogs([("service.name", .string("unknown_service:python"))], [("", [good])]),
                resourceLogs([("device.id", .string("d"))], [("", [good])]),
                resourceLogs(
                    mailResource,
                    [
                        ("a", [good, logRecord(body: .string("x"), attributes: [("message", .string("again"))])]),
                        (
                            "b",
                            [
                                logRecord(attributes: [("device.id", .array([.string("d")]))]), logRecord(attributes: [("id", .int(5))]),
                                good,
                            ]
                        ),
                    ])))
        #expect(batch.recordCount == 7)
        #expect(batch.logs.map(\.line) == [3, 7])
        #expect(batch.rejected.map(\.line) == [1, 2, 4, 5, 6])
        #expect(batch.rejected[0].error.contains("service.name"))
        #expect(batch.rejected[1].error.hasPrefix("appId is required"))
        #expect(batch.rejected[2].error == "attribute 'message' names a field the OTLP mapping sets itself; rename the attribute")
        #expect(batch.rejected[3].error == "attribute 'device.id' must be a string")
        // Server-set fields are refused by the native rule, with its words.
        #expect(batch.rejected[4].error == "id is a reserved field set by the server; rename it")
    }
}
