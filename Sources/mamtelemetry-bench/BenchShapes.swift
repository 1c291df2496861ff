/// The data sets of other shapes, so a storage or query figure is not only a figure about the
/// GUID-heavy and fleet generators (`--data small`, `--data verbose`):
/// - **small**: events with few fields, as a minimal SDK integration sends them (name, time,
///   app, device, event id and one or two data members; no settings, account or session),
///   over 200,000 devices: the keys and indexes weigh the most against the payload.
/// - **verbose**: diagnostic logs dominated by verbose text, in bursts around failures: one
///   device writes 20 to 60 lines within two seconds (HTTP exchanges with correlation ids,
///   multi-line stack traces, token-cache lookups naming the user, policy JSON quoted inside
///   the message) and ends with the error, most of it at verbose level.
extension BenchData {
    static let smallDevices = 200_000

    /// One event of the small data set.
    mutating func smallEvent(into out: inout [UInt8], id: UInt64) {
        let (app, _) = Self.apps[below(Self.apps.count)]
        let device = String(UInt64(below(Self.smallDevices)) &* 0x9E37_79B9_7F4A_7C15, radix: 16).leftPad(16)
        let kind = below(100)
        let name: String
        let data: String
        if kind < 50 {
            name = "EnrollmentCall"
            data = "{\"statusCode\":\(weighted(Self.statusMix)),\"durationMs\":\(80 + below(900))}"
        } else if kind < 80 {
            name = "AppLaunch"
            data = "{\"managementType\":\"\(weighted(Self.management))\"}"
        } else {
            name = "IntuneAction"
            data = "{\"action\":\"\(Self.actions[below(Self.actions.count)])\"}"
        }
        let line =
            "{\"name\":\"\(name)\",\"time\":\"\(time())\",\"appId\":\"\(app)\",\"deviceId\":\"\(device)\",\"eventId\":\"\(String(nonce, radix: 16))-\(String(id, radix: 16))\",\"data\":\(data)}\n"
        out.append(contentsOf: line.utf8)
    }

    /// `count` log records of the verbose data set: bursts of one device each.
    mutating func verboseLogs(into out: inout [UInt8], count: Int) {
        var written = 0
        while written < count {
            let n = min(20 + below(41), count - written)
            verboseBurst(into: &out, lines: n)
            written += n
        }
    }

    /// One device's burst: verbose lines within two seconds of a moment, then the error.
    private mutating func verboseBurst(into out: inout [UInt8], lines: Int) {
        let (app, _) = Self.apps[below(Self.apps.count)]
        let device = below(Self.fleetDevices)
        let deviceId = Self.guid(1, device)
        let sessionId = Self.guid(2, device * 7 + below(4))
        let user = "user\(device % 15_000)@contoso.com"
        let correlation = Self.guid(5, below(1_000_000))
        let code = Self.failingCodes[below(Self.failingCodes.count)]
        let start = times.startMs + Int64(below(Int(times.spanMs)))
        for i in 0..<lines {
            let last = i == lines - 1
            let level = last ? "error" : (chance(0.85) ? "verbose" : "info")
            let message =
                last
                ? "Enrollment failed: status \(code) for \(user) (correlation \(correlation))"
                : verboseMessage(user: user, correlation: correlation)
            let time = Self.timestamp(start + Int64(i) * 2_000 / Int64(max(lines, 1)) + Int64(below(30)))
            let component = Self.logTemplates[below(Self.logTemplates.count)].0
            let line =
                "{\"time\":\"\(time)\",\"level\":\"\(level)\",\"message\":\"\(message)\",\"appId\":\"\(app)\",\"deviceId\":\"\(deviceId)\",\"sessionId\":\"\(sessionId)\",\"component\":\"\(component)\"}\n"
            out.append(contentsOf: line.utf8)
        }
    }

    /// A verbose message, already escaped for a JSON string (quotes, newlines, tabs).
    private mutating func verboseMessage(user: String, correlation: String) -> String {
        switch below(4) {
        case 0:
            let status = [200, 200, 200, 401, 503][below(5)]
            return
                "HTTP \(status) GET https://msmamservice.api.application.com/v2/policies?deviceId=\(Self.guid(6, below(50_000)))\\nx-ms-correlation-id: \(correlation)\\nx-ms-request-id: \(Self.guid(7, below(1_000_000)))\\nContent-Length: \(200 + below(40_000))\\nelapsed: \(5 + below(2_000)) ms"
        case 1:
            let frames = (0..<(3 + below(6))).map { _ in
                "\\n\\tat \(["MAMEnrollmentManager", "MAMPolicyStore", "ADALTokenCache", "MAMServiceClient"][below(4)]).\(["enroll", "refresh", "lookup", "send"][below(4)])(\(["Enrollment", "Policy", "Token", "Network"][below(4)]).swift:\(10 + below(900)))"
            }
            return "Retrying after NSURLErrorDomain -\(1000 + below(20))\(frames.joined())"
        case 2:
            return
                "Token cache lookup for \(user) resource https://msmamservice.api.application.com: \(chance(0.7) ? "hit" : "miss"), expires in \(below(3_600)) s"
        default:
            return
                "Applied policy {\\\"pinRequired\\\":\(chance(0.5)),\\\"saveAsBlocked\\\":\(chance(0.5)),\\\"minOSVersion\\\":\\\"\(14 + below(4)).\(below(6))\\\",\\\"allowedApps\\\":[\\\"\(Self.apps[below(Self.apps.count)].0)\\\"]}\\tversion \(below(500))"
        }
    }
}
