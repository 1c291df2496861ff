import Foundation
import TestSupport
import Testing

@testable import Privacy

/// The quick look (`TextScreen`) lets text through unsearched only when neither detector
/// could find anything in it: held against both detectors on generated text, where a wrong
/// "nothing here" would be a leak.
@Suite struct TextScreenTests {
    static var rounds: Int { 4000 * max(1, Int(ProcessInfo.processInfo.environment["PRIVACY_PROPERTY_SCALE"] ?? "") ?? 1) }

    /// Fragments that come close to what the detectors look for, and plain ones.
    static let fragments = [
        "token", "TOKEN", "_token", "Token=", "refresh_token=", "access_token", "id_token:", "x_token\":\"", "secret", "client_secret=",
        "Password", "passwd=", "pwd=", "api_key=", "x-api-key: ", "apiKey", "api.key=", "Authorization", "authorization: ",
        "Bearer", "bearer\t", "Bearer%20", "Basic ", "basic", "dXNlcjpwYXNz", "dTpw", "eyJ", "eyJhbGciOiJub25lIn0", ".", "..", "0.A",
        "0.AXoA", "@", "%40", "%", "%3D", "%3a", "=", ":", " ", "\t", "\n", "\"", "'", "&", ",", ";", "jane", "Contoso", "example.com",
        "jö", "müller.de", "ελ", "@example.com", "%40müller.de", "@παράδειγμα.ελ", "-", "_", "+", "/", "~", "12345678", "abcdefgh",
        "ABCDEFGH", "token-0123456789abcdef01234567",
        "user-0123456789abcdef01234567", "user", "k", "K", "c", "w", "z", "J", "b", "0", "r", "R", "s", "S", "A", "\\u",
    ]

    @Test func theScreenNeverMissesWhatTheDetectorsFind() {
        var seeded = SeededRandom(seed: 23)
        var credentials = 0
        var addresses = 0
        for _ in 0..<Self.rounds {
            var text = ""
            for _ in 0..<(1 + seeded.below(12)) { text += Self.fragments[seeded.below(Self.fragments.count)] }
            var bytes = text
            bytes.withUTF8 { t in
                let findings = TextScreen.screen(t)
                if !CredentialDetector.spans(in: t).isEmpty {
                    credentials += 1
                    #expect(findings.contains(.credential), "credential missed in \(text.debugDescription)")
                }
                for i in t.indices where EmailDetector.match(in: t, at: i, floor: 0) != nil {
                    addresses += 1
                    #expect(findings.contains(.mail), "address missed in \(text.debugDescription)")
                }
            }
        }
        // The generated text exercises both detectors, not only the screen's "no".
        #expect(credentials > Self.rounds / 20 && addresses > Self.rounds / 50, "\(credentials) credentials, \(addresses) addresses")
    }

    @Test(arguments: [
        "access_token=abc", "Authorization: Bearer x1", "Basic dTpw", "eyJhbGciOiJub25lIn0.eyJ4IjoxfQ.c2ln", "CLIENT_SECRET=1",
        "0.AXoA0123456789012345678901234567890123456789", "X-Api-Key: 1", "passwd=x", "jane%40contoso.com", "a\\u0040b",
    ])
    func eachFormHasItsTrigger(text: String) {
        var bytes = text
        #expect(bytes.withUTF8(TextScreen.screen) != [], "\(text)")
    }

    @Test func plainTextPassesUnsearched() {
        var text = "policy check-in completed in 812 ms (status 100); next in 8 h"
        #expect(text.withUTF8(TextScreen.screen) == [])
        var ids = #"{"deviceId":"9bf55203-e836-45f2-ae26-0d2ebc0925e2","eventId":"0b0c0a0e","v":"10.0.1"}"#
        #expect(ids.withUTF8(TextScreen.screen) == [])
    }
}
