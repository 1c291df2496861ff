import Foundation
import TestSupport
import Testing

@testable import TelemetryServer

/// An incident id a user reads out over the phone resolves however it is typed (case, dashes,
/// the `MAM` prefix left off) and leads to exactly its upload's records, in the environment
/// the upload went to. In process; `mamtelemetryctl logs --incident` is
/// IntegrationTests.ControlCLITests.
@Suite struct IncidentRouteTests {
    @Test func anIncidentResolvesHoweverItIsTypedAndLeadsToItsRecords() async throws {
        try await IngestHarness.run { h in
            let fixture = try await IncidentFixture.store(through: h)
            let id = fixture.id
            #expect(fixture.otherID != id)

            let symbols = String(id.dropFirst(4)).replacingOccurrences(of: "-", with: "")
            var spellings = [
                id, id.lowercased(), "MAM" + symbols, ("mam" + symbols).lowercased(), "MAM-\(symbols.prefix(4))\(symbols.suffix(4))",
            ]
            // Without the prefix too, except for ids whose symbols themselves start with "MAM",
            // which `IncidentID(parsing:)` cannot tell from the prefix.
            if !symbols.hasPrefix("MAM") { spellings += [symbols, symbols.lowercased()] }
            for spelling in spellings {
                #expect(try await h.get("/v1/incidents/\(spelling)")["id"] as? String == id, "\(spelling)")
            }
            let view = try await h.get("/v1/incidents/\(id)")
            #expect(view["guid"] as? String == fixture.guid)
            #expect(view["env"] as? String == "prod")
            #expect(view["appId"] as? String == "com.contoso.mail")
            #expect(view["deviceId"] as? String == fixture.device)
            #expect(view["sessionId"] as? String == "sess-9")
            #expect(view["description"] as? String == "attachments do not open")
            #expect(view["records"] as? Int == 5)
            #expect(view["levels"] as? [String: Int] == ["verbose": 1, "info": 1, "warning": 1, "error": 2])
            #expect(view["firstTime"] as? String == "2026-11-21T10:00:00.000Z")

            // Unknown and malformed ids: 404 with a hint, not a 500.
            let (unknown, unknownBody, _) = try await h.exchange("/v1/incidents/MAM-2222-2222", method: .get)
            #expect(unknown == 404)
            #expect(String(decoding: unknownBody, as: UTF8.self).contains("MAM-"))
            #expect(try await h.exchange("/v1/incidents/MAM-0000-OOOO", method: .get).0 == 404)

            // The records of exactly this upload under every spelling of the id.
            let expected = IncidentFixture.messages
            for spelling in [id, id.lowercased(), "MAM" + symbols] {
                let records = try await h.logRecords("incident=\(spelling)")
                // As a set: the store numbers verbose records after the others of the same upload.
                #expect(Set(records.compactMap { $0["message"] as? String }) == Set(expected), "\(spelling)")
                #expect(records.count == expected.count)
                #expect(records.allSatisfy { $0["incident"] as? String == id && $0["deviceId"] as? String == fixture.device })
            }
            // Oldest first reads like the device wrote it (verbose records keep their place).
            #expect(try await h.logRecords("incident=\(id)").compactMap { $0["message"] as? String } == expected)
            #expect(try await h.logRecords("incident=\(id)&level=error").count == 2)
            #expect(try await h.logRecords("incident=\(fixture.otherID)").compactMap { $0["message"] as? String } == ["other incident"])
            #expect(try await h.exchange("/v1/logs?incident=not-an-id", method: .get).0 == 400)
        }
    }

    @Test func aPPEIncidentIsFoundInPPE() async throws {
        try await IngestHarness.run { h in
            let id = try await IncidentFixture.storePPE(through: h)
            #expect(try await h.get("/v1/incidents/\(id)")["env"] as? String == "ppe")
            #expect(try await h.logRecords("env=ppe&incident=\(id)").compactMap { $0["message"] as? String } == ["ppe incident"])
            #expect(try await h.logRecords("incident=\(id)").isEmpty)
        }
    }
}
