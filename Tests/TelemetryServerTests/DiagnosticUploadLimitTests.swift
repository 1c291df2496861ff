import Foundation
import TelemetryModel
import Testing

@testable import TelemetryServer

/// A diagnostic upload is read by the record scanner's tokenizer: the decode limits apply to
/// its outer object (refused whole, 413, naming the limit), while its records and text
/// lines are limited one by one as in any other body.
@Suite(.serialized) struct DiagnosticUploadLimitTests {
    static let limits = DecodeLimits()

    static func upload(_ extra: String, logs: [String] = [#"{"level":"error","message":"boom"}"#]) -> String {
        #"{"appId":"com.contoso.upload","deviceId":"dev","logs":[\#(logs.joined(separator: ","))]\#(extra)}"#
    }

    @Test func anOuterObjectPastALimitIsRefusedWholeNamingTheLimit() async throws {
        try await IngestHarness.run { h in
            let longDescription = String(repeating: "d", count: Self.limits.maxStringBytes + 1)
            let settings = (0..<Self.limits.maxFields).map { #""flag\#($0)":true"# }.joined(separator: ",")
            var deep = "1"
            for _ in 0..<Self.limits.maxDepth { deep = #"{"n":\#(deep)}"# }
            let cases = [
                ("maxStringBytes=\(Self.limits.maxStringBytes)", #","description":"\#(longDescription)""#),
                ("maxFields=\(Self.limits.maxFields)", #","settings":{\#(settings)}"#),
                ("maxDepth=\(Self.limits.maxDepth)", #","extra":\#(deep)"#),
            ]
            for (limit, extra) in cases {
                let answer = try await h.post("/v1/diagnostics", Self.upload(extra), contentType: "application/json")
                #expect(answer.status == .contentTooLarge, "\(limit): \(answer.body.prefix(300))")
                #expect(answer.errorMessage.contains(limit), "\(answer.errorMessage)")
            }
            #expect(try await h.everywhere("logs", "app=com.contoso.upload").isEmpty, "a refused upload left records behind")
        }
    }

    @Test func recordsAndTextLinesAreLimitedOneByOneAndKeptAsSent() async throws {
        try await IngestHarness.run { h in
            // A long text export of short lines, and a record too deep for the record limit.
            let text = (0..<2000).map { "2026-11-21T10:00:00Z [INFO] console line \($0)" }.joined(separator: "\\n")
            var deep = "1"
            for _ in 0..<Self.limits.maxDepth { deep = #"{"n":\#(deep)}"# }
            let logs = [
                #"{ "message" : "spaced out",  "level":"error", "zeta":"kept", "alpha":"order" }"#,
                #"{"level":"error","message":"too deep","d":\#(deep)}"#,
            ]
            let answer = try await h.post(
                "/v1/diagnostics", Self.upload(#","description":"cannot sync","text":"\#(text)""#, logs: logs),
                contentType: "application/json")
            #expect(answer.status == .created, "\(answer.body.prefix(500))")
            #expect(answer.accepted == 2001, "\(answer.body.prefix(500))")
            #expect(answer.rejectedLines == [2], "the deep record alone is refused, by its position")
            let stored = try await h.everywhere("logs", "app=com.contoso.upload")
            #expect(stored.count == 2001)
            let spaced = stored.filter { $0["message"] as? String == "spaced out" }
            #expect(spaced.count == 1 && spaced.first?["zeta"] as? String == "kept" && spaced.first?["alpha"] as? String == "order")
        }
    }
}
