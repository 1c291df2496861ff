import Compression
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import OTLP
import StoreCore
import SwiftProtobuf
import TelemetryModel
import TelemetryStore
import Testing

@testable import TelemetryServer

/// `POST /v1/logs` in the OTLP/HTTP dialect, through the daemon's real router and pipeline:
/// dispatch on Content-Type, the ingest pipeline's privacy rules and app binding, and the
/// answers an OTLP exporter reads (partial success, Status, Retry-After).
@Suite(.serialized) struct OTLPRouteTests {
    typealias Request = Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest
    typealias Response = Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceResponse
    typealias AnyValue = Opentelemetry_Proto_Common_V1_AnyValue
    typealias KeyValue = Opentelemetry_Proto_Common_V1_KeyValue
    typealias LogRecord = Opentelemetry_Proto_Logs_V1_LogRecord

    /// A daemon in-process with auth on: an admin secret for reading back, and an ingest
    /// token bound to `com.contoso.mail`.
    struct Daemon: Sendable {
        let admin: String
        let mailOnly: String
        let components: DaemonComponents
    }

    static func withDaemon(
        adjust: @Sendable (inout ServerConfiguration) -> Void = { _ in },
        _ test: @escaping @Sendable (Daemon, any TestClientProtocol) async throws -> Void
    ) async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("otlp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var configuration = ServerConfiguration()
        configuration.dataDirectory = dir
        configuration.journalMirror = false
        adjust(&configuration)
        let logger = Logger(label: "otlp-route-tests")
        let components = try DaemonComponents(
            configuration: configuration, clock: SystemWallClock(), metrics: PrometheusMetrics(), space: StatvfsFilesystemSpace(),
            logger: logger)
        let (_, admin) = try await components.tokens.create(name: "admin", scopes: [.admin], apps: [], now: 0)
        let (_, mail) = try await components.tokens.create(name: "mail-relay", scopes: [.ingest], apps: ["com.contoso.mail"], now: 0)
        let app = buildApplication(components: components, logger: logger)
        let daemon = Daemon(admin: admin, mailOnly: mail, components: components)
        try await app.test(.router) { client in try await test(daemon, client) }
    }

    static func value(_ s: String) -> AnyValue {
        var v = AnyValue()
        v.stringValue = s
        return v
    }

    static func attributes(_ pairs: [(String, AnyValue)]) -> [KeyValue] {
        pairs.map { k, v in
            var kv = KeyValue()
            kv.key = k
            kv.value = v
            return kv
        }
    }

    static func record(_ message: String, severity: Int = 9, eventName: String = "", _ attrs: [(String, AnyValue)] = []) -> LogRecord {
        var r = LogRecord()
        r.body = value(message)
        r.severityNumber = .init(rawValue: severity) ?? .unspecified
        r.eventName = eventName
        r.timeUnixNano = 1_795_256_130_123_000_000
        r.attributes = attributes(attrs)
        return r
    }

    /// One resource (app + device) with its records under one scope.
    static func request(_ groups: [(app: String, device: String, extra: [(String, AnyValue)], records: [LogRecord])]) -> Request {
        var request = Request()
        request.resourceLogs = groups.map { g in
            var rl = Opentelemetry_Proto_Logs_V1_ResourceLogs()
            rl.resource.attributes = attributes([("service.name", value(g.app)), ("device.id", value(g.device))] + g.extra)
            var scope = Opentelemetry_Proto_Logs_V1_ScopeLogs()
            scope.scope.name = "Enrollment"
            scope.logRecords = g.records
            rl.scopeLogs = [scope]
            return rl
        }
        return request
    }

    static func post(
        _ client: any TestClientProtocol, _ body: [UInt8], token: String, contentType: String = "application/x-protobuf",
        gzip: Bool = false
    ) async throws -> (status: HTTPResponse.Status, headers: HTTPFields, body: [UInt8]) {
        var headers: HTTPFields = [.contentType: contentType, .authorization: "Bearer \(token)"]
        var bytes = body
        if gzip {
            headers[.contentEncoding] = "gzip"
            bytes = try Deflate.compress(body, format: .gzip)
        }
        return try await client.execute(uri: "/v1/logs", method: .post, headers: headers, body: ByteBuffer(bytes: bytes)) {
            ($0.status, $0.headers, [UInt8](buffer: $0.body))
        }
    }

    static func get(_ client: any TestClientProtocol, _ uri: String, token: String) async throws -> [[String: Any]] {
        try await client.execute(uri: uri, method: .get, headers: [.authorization: "Bearer \(token)"]) { r in
            #expect(r.status == .ok, "\(uri): \(String(buffer: r.body))")
            let page = try JSONSerialization.jsonObject(with: Data(buffer: r.body)) as? [String: Any] ?? [:]
            return (page["logs"] ?? page["events"]) as? [[String: Any]] ?? []
        }
    }

    @Test func gzippedProtobufIsStoredWithTheNativeRulesAndAnsweredInProtobuf() async throws {
        try await Self.withDaemon { daemon, client in
            _ = try await daemon.components.registry.register(
                appId: "com.contoso.optout", flags: AppFlags(telemetryDisabled: true), source: "test", now: 0)
            let body =
                try Self.request([
                    (
                        "com.contoso.mail", "dev-1", [("enduser.id", Self.value("Jane@Contoso.com"))],
                        [
                            Self.record("prod error", severity: 17, [("thread.name", Self.value("main"))]),
                            Self.record("ppe debug", severity: 5, [("mam.use_ppe", Self.value("YES"))]),
                            Self.record("opted out", [("mam.telemetry_disabled", Self.value("true"))]),
                            Self.record("", eventName: "AppLaunch", [("managementType", Self.value("MDM"))]),
                            Self.record("bad", [("message", Self.value("clash"))]),
                        ]
                    ),
                    // Not this token's app: refused per record, not the whole request.
                    ("com.contoso.other", "dev-2", [], [Self.record("other app")]),
                ]).serializedBytes() as [UInt8]
            let (status, headers, answer) = try await Self.post(client, body, token: daemon.mailOnly, gzip: true)
            #expect(status == .ok, "\(String(decoding: answer, as: UTF8.self))")
            #expect(headers[.contentType] == "application/x-protobuf")
            let response = try Response(serializedBytes: answer)
            #expect(response.partialSuccess.rejectedLogRecords == 2)
            let message = response.partialSuccess.errorMessage
            #expect(message.contains("record 5: attribute 'message' names a field the OTLP mapping sets itself"), "\(message)")
            #expect(message.contains("record 6: token 'mail-relay' may not post for app 'com.contoso.other'"), "\(message)")
            #expect(message.contains("1 log record dropped: the app opted out of telemetry"), "\(message)")

            let prod = try await Self.get(client, "/v1/logs?app=com.contoso.mail&limit=100", token: daemon.admin)
            #expect(prod.map { $0["message"] as? String } == ["prod error"])
            #expect(prod.first?["level"] as? String == "error")
            #expect(prod.first?["component"] as? String == "Enrollment")
            #expect(prod.first?["deviceId"] as? String == "dev-1")
            #expect(prod.first?["thread.name"] as? String == "main")
            let ppe = try await Self.get(client, "/v1/logs?env=ppe&app=com.contoso.mail&limit=100", token: daemon.admin)
            #expect(ppe.map { $0["message"] as? String } == ["ppe debug"])
            #expect(ppe.first?["level"] as? String == "verbose")
            let events = try await Self.get(client, "/v1/events?name=AppLaunch&identity=jane@contoso.com", token: daemon.admin)
            #expect(events.count == 1)
            #expect((events.first?["data"] as? [String: Any])?["managementType"] as? String == "MDM")
            #expect(try await Self.get(client, "/v1/logs?contains=opted&limit=100", token: daemon.admin).isEmpty)

            // The registry's opt-out: dropped, answered 200 with the kill switch.
            let optedOut =
                try Self.request([("com.contoso.optout", "dev-3", [], [Self.record("never stored")])]).serializedBytes() as [UInt8]
            let (optStatus, optHeaders, optAnswer) = try await Self.post(client, optedOut, token: daemon.admin)
            #expect(optStatus == .ok)
            #expect(optHeaders[HTTPField.Name("Kill-Tokens")!] == "com.contoso.optout")
            #expect(try Response(serializedBytes: optAnswer).partialSuccess.rejectedLogRecords == 0)
            #expect(try await Self.get(client, "/v1/logs?app=com.contoso.optout&limit=100", token: daemon.admin).isEmpty)

            // Only records for other apps: 403, as a Status the exporter can read.
            let foreign = try Self.request([("com.contoso.other", "dev-2", [], [Self.record("x")])]).serializedBytes() as [UInt8]
            let (forbidden, forbiddenHeaders, status403) = try await Self.post(client, foreign, token: daemon.mailOnly)
            #expect(forbidden == .forbidden)
            #expect(forbiddenHeaders[.contentType] == "application/x-protobuf")
            #expect(try Google_Rpc_Status(serializedBytes: status403).code == 7)
        }
    }

    @Test func otlpJSONIsAnsweredInJSONAndNativeJSONKeepsItsRoute() async throws {
        try await Self.withDaemon { daemon, client in
            let json = """
                {"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"com.contoso.mail"}}]},
                 "scopeLogs":[{"logRecords":[{"severityText":"WARN","body":{"stringValue":"otlp json"},"traceId":"5b8efff798038103d269b633813fc60c"},
                   {"body":{"stringValue":"no app"},"attributes":[{"key":"service.name","value":{"stringValue":"unknown_service"}}]}]}]}]}
                """
            let (status, headers, answer) = try await Self.post(
                client, Array(json.utf8), token: daemon.mailOnly, contentType: "application/json", gzip: true)
            #expect(status == .ok)
            #expect(headers[.contentType] == "application/json")
            let decoded = try Response(jsonUTF8Bytes: answer)
            #expect(decoded.partialSuccess.rejectedLogRecords == 1)
            #expect(decoded.partialSuccess.errorMessage.contains("record 2: appId is required"))
            let stored = try await Self.get(client, "/v1/logs?contains=otlp%20json", token: daemon.admin)
            #expect(stored.first?["traceId"] as? String == "5b8efff798038103d269b633813fc60c")
            #expect(stored.first?["level"] as? String == "warning")

            // Our own records under application/json are still our NDJSON, answered natively.
            let native = #"{"message":"native json","appId":"com.contoso.mail","level":"info"}"#
            let (nativeStatus, _, nativeAnswer) = try await Self.post(
                client, Array(native.utf8), token: daemon.mailOnly, contentType: "application/json")
            #expect(nativeStatus == .ok)
            #expect(parse(nativeAnswer)["accepted"] as? Int == 1)
        }
    }

    @Test func undecodableAndOversizedRequestsAreRefusedAsStatus() async throws {
        let fewRecords: @Sendable (inout ServerConfiguration) -> Void = { $0.decodeLimits.maxRecordsPerRequest = 3 }
        try await Self.withDaemon(adjust: fewRecords) { daemon, client in
            let (bad, badHeaders, badBody) = try await Self.post(client, Array("definitely not protobuf".utf8), token: daemon.admin)
            #expect(bad == .badRequest)
            #expect(badHeaders[.contentType] == "application/x-protobuf")
            let status = try Google_Rpc_Status(serializedBytes: badBody)
            #expect(status.code == 3)
            #expect(status.message.hasPrefix("invalid_otlp: the body is not an OTLP ExportLogsServiceRequest in protobuf"))

            let (badJSON, _, badJSONBody) = try await Self.post(
                client, Array(#"{"resourceLogs":{"nope":1}}"#.utf8), token: daemon.admin, contentType: "application/json")
            #expect(badJSON == .badRequest)
            #expect(try Google_Rpc_Status(jsonUTF8Bytes: badJSONBody).code == 3)

            let four = try Self.request([("com.contoso.mail", "d", [], (1...4).map { Self.record("r\($0)") })]).serializedBytes() as [UInt8]
            let (tooMany, _, tooManyBody) = try await Self.post(client, four, token: daemon.admin)
            #expect(tooMany == .contentTooLarge)
            #expect(try Google_Rpc_Status(serializedBytes: tooManyBody).message.contains("maxRecordsPerRequest=3"))
            #expect(try await Self.get(client, "/v1/logs?app=com.contoso.mail", token: daemon.admin).isEmpty)
        }
    }

    @Test func backpressureTellsExportersToRetryLater() async throws {
        // A full disk: OTLP callers get 503 (exporters retry it; 507 they would drop).
        let noFreeDisk: @Sendable (inout ServerConfiguration) -> Void = { $0.disk.minFreeBytes = .max }
        try await Self.withDaemon(adjust: noFreeDisk) { daemon, client in
            let body = try Self.request([("com.contoso.mail", "d", [], [Self.record("later")])]).serializedBytes() as [UInt8]
            let (status, headers, answer) = try await Self.post(client, body, token: daemon.admin)
            #expect(status == .serviceUnavailable)
            #expect(headers[.retryAfter] == "60")
            let rpc = try Google_Rpc_Status(serializedBytes: answer)
            #expect(rpc.code == 14 && rpc.message.hasPrefix("storage_full:"))
        }
        // Over the token's rate: 429 with Retry-After.
        let oneRecordPerSecond: @Sendable (inout ServerConfiguration) -> Void = { $0.perTokenRecordsPerSecond = 1 }
        try await Self.withDaemon(adjust: oneRecordPerSecond) { daemon, client in
            let body = try Self.request([("com.contoso.mail", "d", [], [Self.record("a"), Self.record("b")])]).serializedBytes() as [UInt8]
            #expect(try await Self.post(client, body, token: daemon.mailOnly).status == .ok)
            let (status, headers, answer) = try await Self.post(client, body, token: daemon.mailOnly)
            #expect(status == .tooManyRequests)
            #expect(Int(headers[.retryAfter] ?? "") ?? 0 >= 1)
            #expect(try Google_Rpc_Status(serializedBytes: answer).code == 8)
        }
    }
}

private func parse(_ bytes: [UInt8]) -> [String: Any] {
    (try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]) ?? [:]
}
