import Archive
import Bundles
import Foundation
import TelemetryModel
import TelemetryStore
import Testing

/// What a bundle shows a caller without the `pii` scope: verbose-level text and incident
/// descriptions withheld (length and keyed digest, never the text, not just e-mails
/// scrubbed), and a manifest whose every count is what the files hold.
@Suite(.serialized)
struct BundleRedactionTests {
    let since = BundleFixture.window.0
    let until = BundleFixture.window.1

    static var marker: Regex<(Substring, Substring, Substring)> { /\[withheld: ([0-9]+) chars, (text-[0-9a-f]{24})\]/ }

    /// A verbose record naming a person and a refresh token in its message and in a free
    /// field an app added; the structural fields stay readable.
    static func chattyVerbose(at time: Int64) -> DecodedRecord {
        let message = "Refreshing token for Jane Roe (refresh_token=0.AAAA-secret) via café"
        let json = """
            {"time":"\(Timestamp.format(milliseconds: time))","level":"verbose","message":"\(message)",\
            "component":"MSAL","thread":"main","details":"user Jane Roe, tenant contoso","appId":"com.contoso.mail",\
            "deviceId":"D1","sessionId":"s-D1","identity":"\(BundleFixture.alice)"}
            """
        let keys = RecordKeys(
            time: time, appId: "com.contoso.mail", deviceId: "D1", sessionId: "s-D1",
            identity: BundleFixture.alice.lowercased(), detail: "MSAL", level: .verbose)
        return DecodedRecord(json: Array(json.utf8), keys: keys, flags: .unspecified, eventId: UUID().uuidString, message: message)
    }

    @Test func verboseTextIsWithheldWithLengthAndKeyedDigestUnlessPIIAllowed() async throws {
        let f = try BundleFixture()
        try await f.fill()
        try await f.append("chatty", [Self.chattyVerbose(at: BundleFixture.t0 + 5 * BundleFixture.minute)], kind: .log)
        let archive = try await f.bundle(BundleRequest(device: "D1", since: since, until: until))
        let logs = try archive.records("logs.ndjson")
        let chatty = try #require(logs.first { $0["component"] as? String == "MSAL" })
        let message = "Refreshing token for Jane Roe (refresh_token=0.AAAA-secret) via café"
        #expect(chatty["message"] as? String == "[withheld: \(message.count) chars, \(f.pseudonymizer.textDigest(message))]")
        #expect((chatty["details"] as? String)?.wholeMatch(of: Self.marker) != nil, "a free field of a verbose record is withheld too")
        #expect(chatty["thread"] as? String == "main" && chatty["deviceId"] as? String == "D1" && chatty["level"] as? String == "verbose")
        #expect(chatty["identity"] as? String == f.pseudonymizer.identityPseudonym(BundleFixture.alice))
        let everything = try ["logs.ndjson", "telemetry.ndjson", "timeline.txt", "summary.json", "manifest.json"].map(archive.member)
            .joined()
        for secret in ["Jane Roe", "refresh_token", "AAAA-secret", "token acquired", "contoso, tenant"] {
            #expect(!everything.contains(secret), "'\(secret)' leaked")
        }
        // Non-verbose text stays readable (e-mails in it pseudonymized).
        #expect(logs.contains { $0["message"] as? String == "policy endpoint slow" })

        let allowed = try await f.bundle(BundleRequest(device: "D1", since: since, until: until, piiAllowed: true))
        let raw = try allowed.records("logs.ndjson").first { $0["component"] as? String == "MSAL" }
        // A credential is masked for a `pii` caller too; the rest of the text is as sent.
        let mask = f.pseudonymizer.pseudonym("0.AAAA-secret", kind: "token")
        #expect(raw?["message"] as? String == message.replacingOccurrences(of: "0.AAAA-secret", with: mask))
        #expect(raw?["details"] as? String == "user Jane Roe, tenant contoso")
        await f.close()
    }

    @Test func incidentDescriptionIsWithheldUnlessPIIAllowed() async throws {
        let f = try BundleFixture()
        try await f.fill()
        let description = "cannot open mail, call \(BundleFixture.alice)"
        let redacted = try await f.bundle(BundleRequest(incident: BundleFixture.incidentID))
        let incident = try JSONSerialization.jsonObject(with: Data(try redacted.member("incident.json").utf8)) as! [String: Any]
        #expect(incident["description"] as? String == "[withheld: \(description.count) chars, \(f.pseudonymizer.textDigest(description))]")
        #expect(incident["identity"] as? String == f.pseudonymizer.identityPseudonym(BundleFixture.alice))
        #expect(!(try redacted.member("incident.json")).contains("cannot open mail"))
        let allowed = try await f.bundle(BundleRequest(incident: BundleFixture.incidentID, piiAllowed: true))
        let raw = try JSONSerialization.jsonObject(with: Data(try allowed.member("incident.json").utf8)) as! [String: Any]
        #expect(raw["description"] as? String == description)
        await f.close()
    }

    /// Every count in the manifest is checked against the files it describes: pseudonyms and
    /// markers are counted in each file and must equal `byFile`, and the totals their sum.
    @Test(arguments: [ArchiveFormat.zip, .tarGz])
    func manifestCountsAreWhatTheFilesHold(format: ArchiveFormat) async throws {
        let f = try BundleFixture()
        try await f.fill()
        try await f.append("chatty", [Self.chattyVerbose(at: BundleFixture.t0 + 5 * BundleFixture.minute)], kind: .log)
        for request in [
            BundleRequest(app: "com.contoso.mail", since: since, until: until, format: format),
            BundleRequest(incident: BundleFixture.incidentID, format: format),
        ] {
            let archive = try await f.bundle(request)
            let redaction = try archive.manifest()["redaction"] as! [String: Any]
            let byFile = redaction["byFile"] as! [String: [String: Int]]
            #expect(
                Set(byFile.keys)
                    == (request.incident == nil
                        ? ["telemetry.ndjson", "logs.ndjson"] : ["telemetry.ndjson", "logs.ndjson", "incident.json"]))
            var totals: [String: Int] = [:]
            for (name, counts) in byFile {
                let text = try archive.member(name)
                #expect(counts["upn"] == text.matches(of: /user-[0-9a-f]{24}/).count, "upn in \(name)")
                #expect(counts["objectId"] == text.matches(of: /oid-[0-9a-f]{24}/).count, "objectId in \(name)")
                #expect(counts["token"] == text.matches(of: /token-[0-9a-f]{24}/).count, "token in \(name)")
                #expect(counts["textWithheld"] == text.matches(of: Self.marker).count, "textWithheld in \(name)")
                let recordsWithMarker = text.split(separator: "\n").filter { $0.contains(Self.marker) }.count
                #expect(counts["verboseMessagesScrubbed"] == (name == "logs.ndjson" ? recordsWithMarker : 0), "verbose records in \(name)")
                for (k, v) in counts { totals[k, default: 0] += v }
            }
            let values = redaction["valuesRedacted"] as! [String: Int]
            #expect(values == ["upn": totals["upn"]!, "objectId": totals["objectId"]!, "token": totals["token"]!])
            #expect(redaction["textWithheld"] as? Int == totals["textWithheld"])
            #expect(redaction["verboseMessagesScrubbed"] as? Int == totals["verboseMessagesScrubbed"])
            // Every verbose record in logs.ndjson was withheld, and nothing else was.
            let verbose = try archive.records("logs.ndjson").filter { $0["level"] as? String == "verbose" }.count
            #expect(redaction["verboseMessagesScrubbed"] as? Int == verbose)
            if request.incident == nil { #expect(verbose == 2) } else { #expect(byFile["incident.json"]?["textWithheld"] == 1) }
        }
        await f.close()
    }
}
