import Foundation
import Privacy
import Testing

/// The structural redactor against each leak the second audit reproduced (issue 23): every
/// answer parses, and no decoded string (member name or value) holds what the caller may
/// not see.
@Suite struct RecordRedactorTests {
    typealias F = RedactionFixtures

    /// The decoded strings a non-`pii` caller is shown of `json`; the answer must parse.
    static func shownStrings(_ json: String, verbose: Bool = false, pii: Bool = false) throws -> [String] {
        let text = F.shown(json, verbose: verbose, pii: pii)
        let parsed = try #require(F.parse(text), "not JSON: \(text)")
        return F.strings(parsed)
    }

    static func leaks(_ strings: [String], _ secrets: [String]) -> [String] {
        secrets.filter { secret in strings.contains { $0.lowercased().contains(secret.lowercased()) } }
    }

    @Test func escapedMemberNamesAndValuesArePseudonymized() throws {
        let shown = try Self.shownStrings(
            #"{"us\u0065r":"dave\u0040contoso.com","note":"for alice\u0040contoso.com","identit\u0079":"bob.smith","list":["carol@contoso.com","erin\u0040contoso.com",["frank\u0040contoso.com"]]}"#
        )
        #expect(Self.leaks(shown, ["dave", "alice", "bob.smith", "carol", "erin", "frank"]).isEmpty, "\(shown)")
        #expect(shown.contains(F.userPseudonym("dave@contoso.com")), "the pseudonym is of the decoded address: \(shown)")
        #expect(shown.contains(F.userPseudonym("bob.smith")))
        #expect(shown.contains("for \(F.userPseudonym("alice@contoso.com"))"))
    }

    @Test func nonASCIIAddressesArePseudonymizedWhole() throws {
        let shown = try Self.shownStrings(#"{"message":"signed in: jö@müller.de, Ωμέγα@παράδειγμα.ελ."}"#)
        #expect(Self.leaks(shown, ["jö", "müller", "Ωμέγα", "παράδειγμα"]).isEmpty, "\(shown)")
        #expect(shown.contains("signed in: \(F.userPseudonym("jö@müller.de")), \(F.userPseudonym("Ωμέγα@παράδειγμα.ελ"))."), "\(shown)")
    }

    @Test(arguments: [false, true])
    func memberNamesArePseudonymizedWithoutDuplicates(verbose: Bool) throws {
        let json = #"{"level":"info","accounts":{"jane@contoso.com":1,"Jane@Contoso.com":2,"bob@contoso.com":{"x":3}}}"#
        let text = F.shown(json, verbose: verbose)
        let object = try #require(F.parse(text) as? [String: Any], "\(text)")
        let accounts = try #require(object["accounts"] as? [String: Any], "\(text)")
        #expect(Self.leaks(F.strings(object), ["jane", "bob@"]).isEmpty, "\(text)")
        // Two spellings of one address meet in one pseudonym: the second is kept apart, not lost.
        let jane = F.userPseudonym("jane@contoso.com")
        #expect(Set(accounts.keys) == [jane, "\(jane)~2", F.userPseudonym("bob@contoso.com")], "\(text)")
        #expect(text.components(separatedBy: "\"\(jane)\":").count == 2, "no duplicate member: \(text)")
    }

    /// The verbose allow-list applies to top-level members only: nested and array elements
    /// have no allow-listed name, and a closed object gives its context back.
    @Test func verboseContextEndsWhereItsObjectCloses() throws {
        let json =
            #"{"level":"verbose","thread":"main","message":"hello Jane","ctx":{"thread":"Jane's phone"},"args":[{"component":"x"},"Jane Roe"],"component":"MSAL"}"#
        let text = F.shown(json, verbose: true)
        let object = try #require(F.parse(text) as? [String: Any], "\(text)")
        #expect(Self.leaks(F.strings(object), ["Jane"]).isEmpty, "\(text)")
        #expect(object["thread"] as? String == "main" && object["component"] as? String == "MSAL", "top-level allow-listed members stay")
        let ctx = try #require(object["ctx"] as? [String: Any])
        #expect((ctx["thread"] as? String)?.hasPrefix("[withheld: ") == true, "\(text)")
        let args = try #require(object["args"] as? [Any])
        #expect(((args[0] as? [String: Any])?["component"] as? String)?.hasPrefix("[withheld: ") == true, "\(text)")
        #expect((args[1] as? String)?.hasPrefix("[withheld: ") == true, "\(text)")
    }

    /// A rewritten string is written with minimal escaping, and its pseudonym is of the
    /// decoded text (`\n` is not part of the address).
    @Test func rewrittenTextStaysValidJSON() throws {
        let text = F.shown(#"{"message":"Signed in as:\njane@contoso.com \"quoted\" \\ done"}"#)
        let object = try #require(F.parse(text) as? [String: Any], "not JSON: \(text)")
        #expect(object["message"] as? String == "Signed in as:\n\(F.userPseudonym("jane@contoso.com")) \"quoted\" \\ done", "\(text)")
    }

    static let jwt =
        "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    static let refresh = "0.AXoA4z8gX3Xh2kW-Q5m1cN7yZ_u0VbHkYbL2pQ9rT6sE8wAAAA.AgABAAEAAAD--DLA3VO7QrddgJg7WevrAgDs_wQA9P-token"
    static let basic = Data("jane@contoso.com:Pa55w0rd!".utf8).base64EncodedString()

    /// Credentials in info, warning, error and event text, in every spelling the audit used;
    /// masked for `pii` callers too.
    @Test(arguments: [false, true])
    func credentialsAreMaskedForEveryCaller(pii: Bool) throws {
        let lines = [
            "GET /me?access_token=\(Self.jwt)&x=1",
            "Authorization: Bearer\t\(Self.jwt)",
            "Authorization=Bearer%20ya29.a0AfH6SMBx3Opaque-token_value",
            "POST /token refresh_token=\(Self.refresh)",
            "proxy said Basic \(Self.basic)",
            "{\"token_type\":\"Bearer\",\"id_token\":\"\(Self.jwt)\",\"client_secret\": \"s3cr3t~value\"}",
            "pin password=hunter2 ok",
            "callback#id_token=opaqueIdT0ken.value&state=1",
            "POST /token client_secret=Cl13nt~Secret.value&grant_type=client_credentials",
            "sync x-session_token=sess-9f8e7d6c5b4a3210 done",
            "authorization: bearer\topaque-Bearer-T0ken",
        ]
        for level in ["info", "warning", "error"] {
            let records = lines.map { line in
                "{\"level\":\"\(level)\",\"message\":\(String(decoding: try! JSONSerialization.data(withJSONObject: line, options: [.fragmentsAllowed]), as: UTF8.self))}"
            }
            for record in records {
                let shown = try Self.shownStrings(record, pii: pii)
                let secrets = [
                    Self.jwt, "ya29.a0AfH6SMBx3Opaque", Self.refresh, Self.basic, "s3cr3t~value", "hunter2", "opaqueIdT0ken",
                    "Cl13nt~Secret", "sess-9f8e7d6c5b4a3210", "opaque-Bearer-T0ken",
                ]
                #expect(Self.leaks(shown, secrets).isEmpty, "\(level) \(record) shows \(shown)")
                #expect(shown.contains { $0.contains("token-") }, "\(record): \(shown)")
            }
        }
        // The same credential gets the same mask everywhere, so repetitions still line up.
        let event = try Self.shownStrings(
            #"{"name":"EnrollmentCall","data":{"errorString":"access_token=\#(Self.jwt)","accessToken":"\#(Self.jwt)"}}"#, pii: pii)
        #expect(event.contains(F.mask(Self.jwt)) && event.contains("access_token=\(F.mask(Self.jwt))"), "\(event)")
        // Members named like a credential, escaped spellings included, whatever their value.
        let members = try Self.shownStrings(
            #"{"name":"EnrollmentCall","data":{"session_token":"sess-1234abcd","refresh\u005ftoken":"opaque-refresh-v4lue","mdm_token":424242}}"#,
            pii: pii)
        #expect(Self.leaks(members, ["sess-1234abcd", "opaque-refresh-v4lue"]).isEmpty, "\(members)")
        #expect(!F.shown(#"{"name":"EnrollmentCall","data":{"mdm_token":424242}}"#, pii: pii).contains("424242"))
        // Prose is not a credential.
        let prose = try Self.shownStrings(#"{"message":"Bearer authentication failed, token expired; basic setup"}"#, pii: pii)
        #expect(prose.contains("Bearer authentication failed, token expired; basic setup"))
    }

    @Test func otlpUserAttributesArePseudonymizedWhereverTheMappingKeepsThem() throws {
        let attributes =
            #"{"user.name":"jdoe","user.full_name":"Jane Doe","user.id":"S-1-5-21-42","enduser.pseudo.id":"p-991","user.email":"jane@contoso.com","enduser.id":4711}"#
        for json in [
            #"{"level":"info","message":"m","component":"c",\#(attributes.dropFirst().dropLast())}"#,
            #"{"name":"AppLaunch","data":\#(attributes)}"#,
            #"{"level":"info","message":"m","resource":\#(attributes)}"#,
        ] {
            let shown = try Self.shownStrings(json)
            #expect(Self.leaks(shown, ["jdoe", "Jane Doe", "S-1-5-21-42", "p-991", "jane@"]).isEmpty, "\(json) -> \(shown)")
            #expect(!F.shown(json).contains("4711"), "a numeric identity is a pseudonym too")
        }
    }

    @Test func objectIDsAndIdentitiesNestedInsideIdentityMembersArePseudonymized() throws {
        let shown = try Self.shownStrings(
            #"{"accountId":"8f14e45f-ceea-467f-a0a5-4e4b6b8f0a11","user":{"name":"Jane","tenant":"x"},"accounts":[{"oid":"8F14E45F-CEEA-467F-A0A5-4E4B6B8F0A12"}]}"#
        )
        #expect(Self.leaks(shown, ["8f14e45f", "Jane"]).isEmpty, "\(shown)")
        #expect(shown.contains { $0.hasPrefix("oid-") })
    }

    /// A `pii` caller sees personal data as stored, credentials masked; a record with no
    /// credential in it is handed back as stored.
    @Test func piiCallersSeePersonalDataButNoCredentials() throws {
        let json = #"{"level":"verbose","message":"Jane Roe jane@contoso.com Bearer \#(Self.jwt)","identity":"jane@contoso.com"}"#
        let shown = F.shown(json, verbose: true, pii: true)
        #expect(shown.contains("Jane Roe jane@contoso.com Bearer token-") && !shown.contains(Self.jwt), "\(shown)")
        let plain = #"{"level":"info","message":"Jane\nRoe","identity":"jane@contoso.com"}"#
        #expect(F.shown(plain, pii: true) == plain)
    }

    /// Redacting twice changes nothing more (a journal line read back into a bundle).
    @Test func redactionIsIdempotent() throws {
        var redactor = F.visibility(pii: false).redactor()
        let once = redactor.scrub(text: "jane@contoso.com Bearer \(Self.jwt) refresh_token=\(Self.refresh)")
        #expect(redactor.scrub(text: once) == once)
        var pii = F.visibility(pii: true).redactor()
        #expect(pii.scrub(text: once) == once)
    }
}
