import Foundation
import TestSupport
import Testing

@testable import TelemetryServer

/// Diagnostic uploads become incidents a person can quote over the phone (issue 3, SPEC
/// §2.5): the short ids are unique, use only unambiguous symbols and resolve to their own
/// upload. In process; how an id resolves however it is typed is IncidentRouteTests, and
/// `mamtelemetryctl logs --incident` is IntegrationTests.ControlCLITests.
@Suite struct IncidentIDRouteTests {
    /// `MAM-XXXX-XXXX` over the alphabet in `Sources/TelemetryModel/IncidentID.swift`:
    /// 2–9 and A–Z without I, L, O, U, V (0/O, 1/I/L and U/V are confused when read aloud).
    static let alphabet = "23456789ABCDEFGHJKMNPQRSTWXYZ"
    static var pattern: Regex<AnyRegexOutput> { try! Regex("^MAM-[\(alphabet)]{4}-[\(alphabet)]{4}$") }

    @Test func idsAreUniqueAndHumanFriendly() async throws {
        try await IngestHarness.run { d in
            let uploads = 40
            // Concurrent uploads, as many devices would send them; each answer reduced to
            // (status, id, guid) so it can cross task boundaries.
            let answers = try await withThrowingTaskGroup(of: (Int, String?, String?).self) { group in
                for i in 0..<uploads {
                    group.addTask {
                        let (status, answer) = try await d.diagnose([
                            "appId": "com.contoso.mail", "deviceId": "dev-\(i)", "description": "upload \(i)",
                            "logs": [["level": "info", "message": "upload \(i)"]],
                        ])
                        let incident = answer["incident"] as? [String: Any]
                        return (status, incident?["id"] as? String, incident?["guid"] as? String)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.allSatisfy { $0.0 == 201 })
            let ids = answers.compactMap(\.1)
            let guids = answers.compactMap(\.2)
            #expect(ids.count == uploads && guids.count == uploads)
            #expect(Set(ids).count == uploads, "duplicate incident ids: \(ids)")
            #expect(Set(guids).count == uploads)
            for id in ids { #expect(id.wholeMatch(of: Self.pattern) != nil, "\(id)") }
            for guid in guids { #expect(UUID(uuidString: guid) != nil, "\(guid)") }
            // Every id resolves to its own upload.
            for (id, guid) in zip(ids, guids).prefix(10) {
                let view = try await d.get("/v1/incidents/\(id)")
                #expect(view["id"] as? String == id)
                #expect(view["guid"] as? String == guid)
            }
        }
    }
}
