import Foundation

/// A small fleet for the bundle suites (in process, and the CLI against a daemon): devices
/// A and C used by Alice, B by Bob, PPE test data on A, one diagnostic upload from A, and a
/// `bundle` token and a `bundle`+`pii` token. A bundle is checked against what the query API
/// returns for the same filter.
public struct BundleFleetFixture: Sendable {
    public static let alice = "Alice.Smith@Contoso.com"
    public static let bob = "bob@fabrikam.com"
    public static let aliceOid = "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b"
    /// Every personal value in the input, lower-cased (identities, emails in text, an object id).
    public static let personalData = ["alice.smith@contoso.com", "bob@fabrikam.com", "carol@example.org", aliceOid]

    public enum SetupError: Error { case refused(String) }

    public let devices: [String]
    public let ppeMarker: String
    public private(set) var incident = ""
    public private(set) var bundleToken = ""
    public private(set) var piiToken = ""
    public private(set) var piiTokenID = ""

    private init(nonce: String) {
        devices = ["dev-a-\(nonce)", "dev-b-\(nonce)", "dev-c-\(nonce)"]
        ppeMarker = "PPE-MARKER-\(nonce)"
    }

    /// Stores the fleet through `requests` (as the admin), with times relative to now, and
    /// makes its two tokens.
    public static func store(through requests: some TelemetryRequests) async throws -> BundleFleetFixture {
        var fleet = BundleFleetFixture(nonce: String(UUID().uuidString.prefix(8).lowercased()))
        try await fleet.fill(requests)
        return fleet
    }

    private mutating func fill(_ requests: some TelemetryRequests) async throws {
        let now = Date().timeIntervalSince1970
        func time(_ minutesAgo: Double) -> String {
            let f = ISO8601DateFormatter()
            f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return f.string(from: Date(timeIntervalSince1970: now - minutesAgo * 60))
        }
        let people = [(devices[0], Self.alice), (devices[1], Self.bob), (devices[2], Self.alice)]
        var telemetry: [String] = []
        var logs: [String] = []
        for (i, (device, upn)) in people.enumerated() {
            let base = 50.0 - Double(i)
            let envelope =
                #""appId":"com.contoso.mail","appVersion":"4.2","sdkVersion":"19.6.0","platform":"iOS","deviceId":"\#(device)","sessionId":"s-\#(device)","identity":"\#(upn)","accountId":"\#(Self.aliceOid)","settings":{"VerboseLoggingEnabled":"YES"}"#
            telemetry.append(#"{"name":"AppLaunch","time":"\#(time(base))",\#(envelope),"data":{"managementType":"MAM-WE"}}"#)
            telemetry.append(
                #"{"name":"EnrollmentCall","time":"\#(time(base - 5))",\#(envelope),"data":{"operation":"enroll","api":"registerAndEnrollAccount","statusCode":212,"didSucceed":false,"durationMs":840,"errorString":"policy endpoint unreachable for \#(upn)"}}"#
            )
            telemetry.append(
                #"{"name":"IntuneAction","time":"\#(time(base - 10))",\#(envelope),"data":{"action":"PinPrompt","result":"shown"}}"#)
            logs.append(
                #"{"time":"\#(time(base - 1))","level":"verbose","message":"MSAL token acquired for \#(upn); cc carol@example.org","component":"Identity","appId":"com.contoso.mail","deviceId":"\#(device)","sessionId":"s-\#(device)","identity":"\#(upn)"}"#
            )
            logs.append(
                #"{"time":"\#(time(base - 6))","level":"warning","message":"Enrollment retry scheduled in 24 h","component":"MAMEnrollment","appId":"com.contoso.mail","deviceId":"\#(device)","sessionId":"s-\#(device)","identity":"\#(upn)"}"#
            )
        }
        // PPE test data for device A, which prod bundles must never show.
        for k in 0..<2 {
            telemetry.append(
                #"{"name":"AppLaunch","time":"\#(time(40 - Double(k)))","appId":"com.contoso.mail","deviceId":"\#(devices[0])","identity":"\#(Self.alice)","settings":{"MAMTelemetryUsePPE":true},"data":{"managementType":"\#(ppeMarker)"}}"#
            )
        }
        let t = try await requests.postBytes(
            "/v1/telemetry", Array(telemetry.joined(separator: "\n").utf8), headers: [("Content-Type", "application/x-ndjson")])
        guard t.0 == 200, (parseJSON(t.1)["accepted"] as? Int) == telemetry.count else {
            throw SetupError.refused("telemetry: \(t.0) \(String(decoding: t.1, as: UTF8.self))")
        }
        let l = try await requests.ingestLogs(logs.joined(separator: "\n"))
        guard l.0 == 200 else { throw SetupError.refused("logs: \(l.0) \(l.1)") }

        let (status, answer) = try await requests.diagnose([
            "appId": "com.contoso.mail", "deviceId": devices[0], "sessionId": "s-\(devices[0])", "identity": Self.alice,
            "description": "Cannot open attachments since this morning (I am alice.smith@contoso.com)",
            "logs": [
                ["time": time(20), "level": "info", "message": "Policy check-in started", "component": "MAMPolicyManager"],
                [
                    "time": time(19.5), "level": "verbose",
                    "message": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl for \(Self.alice)", "component": "Identity",
                ],
                [
                    "time": time(19), "level": "error", "message": "Policy check-in failed: PolicyEndPointNetworkFailure (212)",
                    "component": "MAMPolicyManager",
                ],
            ],
        ])
        guard status == 201, let id = (answer["incident"] as? [String: Any])?["id"] as? String else {
            throw SetupError.refused("diagnostics: \(status) \(answer)")
        }
        incident = id
        (bundleToken, _) = try await Self.token("support-bundle", ["bundle"], requests)
        (piiToken, piiTokenID) = try await Self.token("support-pii", ["bundle", "pii"], requests)
    }

    private static func token(_ name: String, _ scopes: [String], _ requests: some TelemetryRequests) async throws -> (String, String) {
        let body = try JSONSerialization.data(withJSONObject: ["name": name, "scopes": scopes])
        let (status, answer) = try await requests.postBytes("/v1/tokens", [UInt8](body), headers: [("Content-Type", "application/json")])
        let object = parseJSON(answer)
        guard status == 201, let secret = object["token"] as? String, let id = (object["info"] as? [String: Any])?["id"] as? String else {
            throw SetupError.refused("token \(name): \(status) \(String(decoding: answer, as: UTF8.self))")
        }
        return (secret, id)
    }

    /// Record ids the query API returns for a filter (as the admin): what a bundle is checked against.
    public static func ids(_ path: String, member: String, through requests: some TelemetryRequests) async throws -> Set<String> {
        let page = try await requests.getJSON(path + (path.contains("?") ? "&" : "?") + "limit=10000")
        return Set((page[member] as? [[String: Any]] ?? []).compactMap(recordID))
    }

    /// The record ids of an NDJSON bundle member.
    public static func ids(_ ndjson: [UInt8]?) -> Set<String> {
        Set(lines(ndjson).compactMap(recordID))
    }

    /// A record's id as the API and the bundle spell it (a number per environment's store).
    public static func recordID(_ record: [String: Any]) -> String? {
        (record["id"] as? NSNumber)?.stringValue ?? record["id"] as? String
    }

    public static func identities(_ ndjson: [UInt8]?) -> Set<String> {
        Set(lines(ndjson).compactMap { $0["identity"] as? String })
    }

    public static func lines(_ ndjson: [UInt8]?) -> [[String: Any]] {
        (ndjson ?? []).split(separator: 0x0A).map { parseJSON(Array($0)) }
    }

    public static func lowered(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self).lowercased() }

    /// Whether any member holds `needle`, case-insensitively.
    public static func contains(_ members: [String: [UInt8]], _ needle: String) -> Bool {
        members.values.contains { lowered($0).contains(needle.lowercased()) }
    }
}
