import Foundation
import OTLP
import SwiftProtobuf
import TelemetryModel
import Testing

/// Telling OTLP bodies from native ones, both encodings, the limits, and the answers.
@Suite struct OTLPDecodingTests {
    @Test func contentTypeAndBodyTellTheDialect() {
        let otlpJSON = Array(#"  {"resourceLogs":[]}"#.utf8)
        let laterKey = Array(#"{"extra":{"deep":[1,{"x":"}"}]},"resourceLogs":[]}"#.utf8)
        let native = Array(#"{"message":"m","appId":"a"}"#.utf8)
        #expect(OTLPEncoding.detect(contentType: "application/x-protobuf", body: []) == .protobuf)
        #expect(OTLPEncoding.detect(contentType: "Application/Protobuf; foo=bar", body: []) == .protobuf)
        #expect(OTLPEncoding.detect(contentType: "application/json", body: otlpJSON) == .json)
        #expect(OTLPEncoding.detect(contentType: "application/json; charset=utf-8", body: laterKey) == .json)
        #expect(OTLPEncoding.detect(contentType: "application/json", body: native) == nil)
        #expect(OTLPEncoding.detect(contentType: "application/json", body: Array("[{\"resourceLogs\":1}]".utf8)) == nil)
        #expect(OTLPEncoding.detect(contentType: "application/x-ndjson", body: otlpJSON) == nil)
        #expect(OTLPEncoding.detect(contentType: "text/plain", body: otlpJSON) == nil)
        #expect(OTLPEncoding.detect(contentType: nil, body: otlpJSON) == nil)
        // A nested `resourceLogs` is not the top level's; broken JSON before the key is native.
        #expect(OTLPEncoding.detect(contentType: "application/json", body: Array(#"{"a":{"resourceLogs":1}}"#.utf8)) == nil)
        #expect(OTLPEncoding.detect(contentType: "application/json", body: Array(#"{"a":tru,"resourceLogs":[]}"#.utf8)) == nil)
    }

    static let otlpJSON = """
        {"resourceLogs":[{"resource":{"attributes":[
            {"key":"service.name","value":{"stringValue":"com.contoso.mail"}},
            {"key":"device.id","value":{"stringValue":"dev-1"}}]},
          "scopeLogs":[{"scope":{"name":"Enrollment"},"logRecords":[
            {"timeUnixNano":"1795256130123456789","severityNumber":13,"severityText":"WARN",
             "body":{"stringValue":"slow"},"attributes":[{"key":"retry","value":{"intValue":"3"}}],
             "traceId":"5B8EFFF798038103D269B633813FC60C","spanId":"eee19b7ec3c1b174","aFieldFromTheFuture":1},
            {"eventName":"AppLaunch","timeUnixNano":1795256130123456789,
             "attributes":[{"key":"managementType","value":{"stringValue":"MDM"}}]}]}]}]}
        """

    @Test func otlpJSONDecodesLikeProtobufAndKeepsHexTraceIDs() throws {
        let fromJSON = try OTLPLogsDecoder().decode(Array(Self.otlpJSON.utf8), encoding: .json, receivedAt: 1)
        #expect(fromJSON.rejected.isEmpty)
        let log = try #require(fromJSON.logs.first)
        let json = try object(log)
        #expect(json["traceId"] as? String == "5B8EFFF798038103D269B633813FC60C")
        #expect(json["spanId"] as? String == "eee19b7ec3c1b174")
        #expect(json["retry"] as? Int == 3)
        #expect(log.keys.level == .warning)
        #expect(log.keys.time == 1_795_256_130_123)
        #expect(fromJSON.events.first?.keys.detail == "MDM")

        // The same request in protobuf: the same native records, byte for byte.
        let pb = request(
            resourceLogs(
                [("service.name", .string("com.contoso.mail")), ("device.id", .string("dev-1"))],
                [
                    (
                        "Enrollment",
                        [
                            logRecord(
                                body: .string("slow"), severity: 13, severityText: "WARN", timeNanos: 1_795_256_130_123_456_789,
                                attributes: [("retry", .int(3))],
                                traceID: [0x5B, 0x8E, 0xFF, 0xF7, 0x98, 0x03, 0x81, 0x03, 0xD2, 0x69, 0xB6, 0x33, 0x81, 0x3F, 0xC6, 0x0C],
                                spanID: [0xEE, 0xE1, 0x9B, 0x7E, 0xC3, 0xC1, 0xB1, 0x74]),
                            logRecord(
                                timeNanos: 1_795_256_130_123_456_789, eventName: "AppLaunch",
                                attributes: [("managementType", .string("MDM"))]),
                        ]
                    )
                ]))
        let fromProtobuf = try OTLPLogsDecoder().decode(try pb.protobuf, encoding: .protobuf, receivedAt: 1)
        let jsonText = String(decoding: log.json, as: UTF8.self)
        #expect(
            String(decoding: fromProtobuf.logs[0].json, as: UTF8.self)
                == jsonText.replacingOccurrences(of: "5B8EFFF798038103D269B633813FC60C", with: "5b8efff798038103d269b633813fc60c"))
        #expect(fromProtobuf.events[0].json == fromJSON.events[0].json)
    }

    @Test func undecodableBodiesFailTheRequest() throws {
        let decoder = OTLPLogsDecoder()
        let valid = try request(resourceLogs(mailResource, [("", [logRecord(body: .string("m"))])])).protobuf
        #expect(throws: OTLPDecodingError.self) { try decoder.decode(Array(valid.dropLast(3)), encoding: .protobuf, receivedAt: 0) }
        #expect(throws: OTLPDecodingError.self) {
            try decoder.decode(Array("not protobuf at all".utf8), encoding: .protobuf, receivedAt: 0)
        }
        #expect(throws: OTLPDecodingError.self) {
            try decoder.decode(Array(#"{"resourceLogs":[{"scopeLogs":3}]}"#.utf8), encoding: .json, receivedAt: 0)
        }
        #expect(throws: OTLPDecodingError.self) { try decoder.decode(Array(#"{"resourceLogs":["#.utf8), encoding: .json, receivedAt: 0) }
        // Invalid UTF-8 in a protobuf string field.
        var bad = logRecord(body: .string("m"))
        bad.severityText = "WARN"
        var bytes = try request(resourceLogs(mailResource, [("", [bad])])).protobuf
        let at = try #require(bytes.firstRange(of: Array("WARN".utf8)))
        bytes[at.lowerBound] = 0xFF
        #expect(throws: OTLPDecodingError.self) { try decoder.decode(bytes, encoding: .protobuf, receivedAt: 0) }
        // An empty request is valid: nothing to take.
        let empty = try decoder.decode([], encoding: .protobuf, receivedAt: 0)
        #expect(empty.recordCount == 0 && empty.logs.isEmpty && empty.rejected.isEmpty)
    }

    @Test func recordsMeetTheNativeLimitsOneByOne() throws {
        let limits = DecodeLimits(maxLineBytes: 300, maxRecordsPerRequest: 5, maxDepth: 3, maxFields: 12, maxStringBytes: 40)
        let decoder = OTLPLogsDecoder(limits: limits)
        let records = [
            logRecord(body: .string("fine")),
            logRecord(body: .string(String(repeating: "x", count: 41))),
            logRecord(body: .string("deep"), attributes: [("a", .kvlist([("b", .kvlist([("c", .kvlist([("d", .int(1))]))]))]))]),
            logRecord(body: .string("wide"), attributes: (0..<12).map { ("k\($0)", .int(Int64($0))) }),
            logRecord(body: .string("long"), attributes: (0..<5).map { ("key\($0)", .string(String(repeating: "v", count: 40))) }),
        ]
        let batch = try decoder.decode(
            try request(resourceLogs(mailResource, [("", records)])).protobuf, encoding: .protobuf, receivedAt: 0)
        #expect(batch.logs.map(\.line) == [1])
        #expect(batch.rejected.map(\.line) == [2, 3, 4, 5])
        #expect(batch.rejected[0].error.contains("maxStringBytes=40"))
        #expect(batch.rejected[1].error.contains("maxDepth=3"))
        #expect(batch.rejected[2].error.contains("maxFields=12"))
        #expect(batch.rejected[3].error.contains("maxLineBytes=300"))

        // More records than the request limit: the whole request is refused, naming it.
        let six = request(resourceLogs(mailResource, [("", Array(repeating: logRecord(body: .string("m")), count: 6))]))
        let error = try #require(throws: RequestLimitError.self) {
            try decoder.decode(try six.protobuf, encoding: .protobuf, receivedAt: 0)
        }
        #expect(error.limit == "maxRecordsPerRequest")
        #expect(error.message.contains("maxRecordsPerRequest=5"))
    }

    @Test func absurdNestingFailsTheRequestWithoutExhaustingTheStack() throws {
        var value = Attr.string("bottom")
        for _ in 0..<200 { value = .kvlist([("n", value)]) }
        let body = try request(resourceLogs(mailResource, [("", [logRecord(body: .string("m"), attributes: [("deep", value)])])])).protobuf
        #expect(throws: OTLPDecodingError.self) { try OTLPLogsDecoder().decode(body, encoding: .protobuf, receivedAt: 0) }
        // Within the protobuf bound but past maxDepth: that record alone is refused.
        var shallower = Attr.string("bottom")
        for _ in 0..<20 { shallower = .kvlist([("n", shallower)]) }
        let ok = try request(
            resourceLogs(
                mailResource, [("", [logRecord(body: .string("m"), attributes: [("deep", shallower)]), logRecord(body: .string("n"))])])
        ).protobuf
        let batch = try OTLPLogsDecoder().decode(ok, encoding: .protobuf, receivedAt: 0)
        #expect(batch.logs.map(\.line) == [2])
        #expect(batch.rejected.first?.error.contains("maxDepth=16") == true)
    }

    @Test func answersAreInTheRequestsEncoding() throws {
        let rejected = (1...7).map { LineError(line: $0 * 2, error: "reason \($0)") }
        let pb = try PBResponse(
            serializedBytes: OTLPAnswer.success(rejected: rejected, warning: "1 log record dropped", encoding: .protobuf))
        #expect(pb.partialSuccess.rejectedLogRecords == 7)
        #expect(
            pb.partialSuccess.errorMessage
                == "7 log records rejected: record 2: reason 1; record 4: reason 2; record 6: reason 3; record 8: reason 4; record 10: reason 5; and 2 more; 1 log record dropped"
        )

        let json =
            try JSONSerialization.jsonObject(
                with: Data(OTLPAnswer.success(rejected: Array(rejected.prefix(1)), warning: nil, encoding: .json))) as? [String: Any]
        let partial = try #require(json?["partialSuccess"] as? [String: Any])
        #expect(partial["rejectedLogRecords"] as? String == "1")
        #expect(partial["errorMessage"] as? String == "1 log record rejected: record 2: reason 1")

        // Fully accepted: no partial_success at all.
        #expect(OTLPAnswer.success(rejected: [], warning: nil, encoding: .protobuf).isEmpty)
        #expect(String(decoding: OTLPAnswer.success(rejected: [], warning: nil, encoding: .json), as: UTF8.self) == "{}")
        let warned = try PBResponse(serializedBytes: OTLPAnswer.success(rejected: [], warning: "dropped", encoding: .protobuf))
        #expect(
            warned.hasPartialSuccess && warned.partialSuccess.rejectedLogRecords == 0 && warned.partialSuccess.errorMessage == "dropped")

        let status = try Google_Rpc_Status(serializedBytes: OTLPAnswer.status(httpStatus: 503, message: "later", encoding: .protobuf))
        #expect(status.code == 14 && status.message == "later")
        let statusJSON = try Google_Rpc_Status(jsonUTF8Bytes: OTLPAnswer.status(httpStatus: 400, message: "bad", encoding: .json))
        #expect(statusJSON.code == 3 && statusJSON.message == "bad")
    }
}
