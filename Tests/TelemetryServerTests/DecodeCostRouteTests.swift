import Foundation
import HTTPTypes
import Metrics
import OTLP
import SwiftProtobuf
import TelemetryModel
import TelemetryStore
import Testing

@testable import TelemetryServer

/// OTLP decode cost counts against ingest's memory: the audit's 14 MB protobuf body of 9,000
/// records with 780 empty array values each took the daemon from 36 to 520 MB (two at once,
/// 943 MB), because the budget counted wire and inflated bytes, not the decoded objects.
@Suite struct DecodeCostRouteTests {
    /// `records` log records, each with one attribute holding `values` empty array values.
    static func emptyArrays(records: Int, values: Int) throws -> [UInt8] {
        var any = Opentelemetry_Proto_Common_V1_AnyValue()
        any.arrayValue.values = Array(repeating: Opentelemetry_Proto_Common_V1_AnyValue(), count: values)
        var attribute = Opentelemetry_Proto_Common_V1_KeyValue()
        attribute.key = "payload"
        attribute.value = any
        var record = Opentelemetry_Proto_Logs_V1_LogRecord()
        record.body.stringValue = "hello"
        record.attributes = [attribute]
        var service = Opentelemetry_Proto_Common_V1_KeyValue()
        service.key = "service.name"
        service.value.stringValue = "com.contoso.cost"
        var resourceLogs = Opentelemetry_Proto_Logs_V1_ResourceLogs()
        resourceLogs.resource.attributes = [service]
        var scopeLogs = Opentelemetry_Proto_Logs_V1_ScopeLogs()
        scopeLogs.logRecords = Array(repeating: record, count: records)
        resourceLogs.scopeLogs = [scopeLogs]
        var request = Opentelemetry_Proto_Collector_Logs_V1_ExportLogsServiceRequest()
        request.resourceLogs = [resourceLogs]
        return try request.serializedBytes()
    }

    @Test func aRequestPastTheValueCapIs413AndStoresNothing() async throws {
        let adjust: @Sendable (inout ServerConfiguration) -> Void = { $0.decodeLimits.maxValuesPerRequest = 20_000 }
        try await IngestHarness.run(adjust: adjust) { h in
            let refused = try await h.post(
                "/v1/logs", bytes: try Self.emptyArrays(records: 100, values: 300), contentType: "application/x-protobuf")
            #expect(refused.status == .contentTooLarge)
            // Answered as an OTLP Status (the exporter reads no JSON), naming the limit.
            #expect(refused.headers[.contentType] == "application/x-protobuf")
            #expect(refused.body.contains("too_many_values") && refused.body.contains("maxValuesPerRequest=20000"), "\(refused.body)")
            #expect(try await h.records("logs").isEmpty)

            let taken = try await h.post(
                "/v1/logs", bytes: try Self.emptyArrays(records: 50, values: 300), contentType: "application/x-protobuf")
            #expect(taken.status == .ok)
            #expect(try await h.records("logs").count == 50)
        }
    }

    /// The decode cost is reserved in the request's in-flight budget: with the budget held by
    /// an older request, a body whose decoded form does not fit is refused (retry later)
    /// before it is decoded, though its wire bytes fit easily.
    @Test func theDecodeCostIsChargedToTheInFlightBudget() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cost-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteRecordStore(directory: directory, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
        let admission = IngestAdmission(
            limits: .init(maxInFlightBytes: 1 << 20, maxQueuedRecords: 1000), commitQueue: store.committer, disk: nil,
            metrics: NOOPMetricsHandler.instance)
        // 30,000 values: about 2 MB decoded, from a body of about 70 KB.
        let body = try Self.emptyArrays(records: 100, values: 300)
        #expect(body.count < 100_000)
        try await admission.admit(bytes: 1000) { _ in
            let refusal = await IngestAdmissionTests.refusal {
                try await admission.admit(bytes: body.count) { budget in
                    try OTLPLogsDecoder().decode(body, encoding: .protobuf, receivedAt: 0, charge: budget.holdDecoded)
                }
            }
            guard case .inFlightFull(let limit, .decoded)? = refusal else {
                Issue.record("a body decoding to ~2 MB was decoded inside a 1 MB budget: \(String(describing: refusal))")
                return
            }
            #expect(limit == 1 << 20)
        }
        await store.committer.close()
    }
}
