import Foundation
import TelemetryModel
import Testing

@testable import TelemetryServer

/// `GET /v1/status-codes` explains every enrollment status code of the SDK's list (SPEC §2.2),
/// each with a meaning and a next step a support engineer can act on.
@Suite struct StatusCodeRouteTests {
    static let specCodes = Array(100...104) + Array(200...227)

    @Test func everyDocumentedCodeIsExplained() async throws {
        try await IngestHarness.run { h in
            let answer = try await h.get("/v1/status-codes")
            let codes = try #require(answer["statusCodes"] as? [[String: Any]])
            #expect(codes.compactMap { $0["code"] as? Int } == Self.specCodes)
            for c in codes {
                let code = try #require(c["code"] as? Int)
                #expect(c["name"] as? String == EnrollmentStatus.name(of: code))
                #expect(c["succeeded"] as? Bool == (code < 200))
                for member in ["meaning", "nextStep"] {
                    let text = c[member] as? String ?? ""
                    #expect(text.count >= 15 && text.hasSuffix("."), "\(code) \(member): '\(text)'")
                }
            }
            let byCode = Dictionary(uniqueKeysWithValues: codes.map { ($0["code"] as! Int, $0) })
            #expect((byCode[200]?["nextStep"] as? String)?.contains("Assign an Intune license") == true)
            #expect((byCode[225]?["meaning"] as? String)?.contains("no app protection policy targets") == true)
            #expect(answer["retryAfterFailureHours"] as? Int == 24 && answer["policyCheckInHours"] as? Int == 8)
        }
    }
}
