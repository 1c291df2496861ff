import Foundation

/// The fixed input every hot path works on: one events request of `lines` NDJSON lines, the
/// shape `mamtelemetry-bench --data fleet` sends (a relayed batch: 25 devices, two
/// sessions each, launches, enrollment calls and actions in the fleet's mix). It is built
/// from the line index alone, with no random source and no clock, so every run — and every
/// callgrind count — sees byte-identical data.
public struct SampleRequest: Sendable {
    public let body: [UInt8]
    public let lines: Int
    /// The event times span this window (epoch ms), for queries that cover all of it.
    public let firstTime: Int64
    public let lastTime: Int64

    static let apps = ["com.contoso.outlook", "com.microsoft.teams", "com.contoso.crm", "com.microsoft.office.word"]
    static let statusCodes = [100, 100, 100, 101, 101, 100, 200, 203, 212, 216]
    static let operations = ["policyCheckIn", "enrollment", "mamServiceLookup", "policyCheckIn"]
    static let management = ["MAM-WE", "MAM-WE", "MDM", "Unmanaged"]
    static let actions = ["policyRefresh", "pinPrompt", "saveAsBlocked", "selectiveWipe"]

    /// `batch` makes the event ids of one request unique among several built from the same shape.
    public init(lines: Int = 1_000, batch: Int = 0, baseTime: Int64 = 1_790_000_000_000) {
        var body: [UInt8] = []
        body.reserveCapacity(lines * 480)
        for i in 0..<lines {
            body.append(contentsOf: Self.line(i, batch: batch, baseTime: baseTime).utf8)
            body.append(0x0A)
        }
        self.body = body
        self.lines = lines
        self.firstTime = baseTime
        self.lastTime = baseTime + Int64(lines - 1) * 250
    }

    /// Line `i`: a deterministic mix (the multipliers are coprime to the table sizes, so
    /// neighbouring lines differ the way a device's consecutive events do).
    static func line(_ i: Int, batch: Int, baseTime: Int64) -> String {
        let device = (i * 7) % 25
        let session = device * 2 + (i / 500)
        let app = apps[device % apps.count]
        let ms = baseTime + Int64(i) * 250
        let kind = (i * 13) % 10
        let name: String
        let data: String
        if kind < 5 {
            let code = statusCodes[(i * 3) % statusCodes.count]
            name = "EnrollmentCall"
            data =
                "{\"operation\":\"\(operations[i % operations.count])\",\"statusCode\":\(code),\"didSucceed\":\(code < 200),\"durationMs\":\(80 + (i * 37) % 900)}"
        } else if kind < 8 {
            name = "AppLaunch"
            data =
                "{\"managementType\":\"\(management[device % management.count])\",\"coldStart\":\(i % 3 == 0),\"launchMs\":\(200 + (i * 53) % 1500)}"
        } else {
            name = "IntuneAction"
            data = "{\"action\":\"\(actions[i % actions.count])\",\"initiatedBy\":\"admin\"}"
        }
        let ppe = device == 24 ? ",\"MAMTelemetryUsePPE\":\"YES\"" : ""
        return
            "{\"name\":\"\(name)\",\"time\":\"\(iso8601(ms))\",\"appId\":\"\(app)\",\"appVersion\":\"4.2411.0\",\"sdkVersion\":\"19.6.1\",\"platform\":\"\(device % 3 == 0 ? "Android" : "iOS")\",\"deviceId\":\"\(guid(1, device))\",\"sessionId\":\"\(guid(2, session))\",\"identity\":\"user\(device)@contoso.com\",\"accountId\":\"\(guid(3, device))\",\"tenantId\":\"\(guid(4, 0))\",\"eventId\":\"b\(batch)-e\(i)\",\"settings\":{\"VerboseLoggingEnabled\":\"NO\"\(ppe)},\"data\":\(data)}"
    }

    static func guid(_ kind: Int, _ n: Int) -> String {
        let a = UInt64(kind) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(n) &* 0xBF58_476D_1CE4_E5B9
        let hex = String(a, radix: 16)
        let digits = String(repeating: "0", count: 16 - hex.count) + hex
        let d = Array(digits + digits.reversed())
        return "\(String(d[0..<8]))-\(String(d[8..<12]))-4\(String(d[13..<16]))-a\(String(d[17..<20]))-\(String(d[20..<32]))"
    }

    static func iso8601(_ ms: Int64) -> String {
        var seconds = time_t(ms / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let millis = Int(ms % 1000)
        let m = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return
            "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)).\(m)Z"
    }
}
