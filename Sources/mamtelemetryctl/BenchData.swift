import Foundation

struct BenchData {
    var rng: UInt64
    let nonce: UInt64
    let ppe: Double
    let disabled: Double
    let times: BenchTimes

    init(seed: UInt64, nonce: UInt64, ppe: Double, disabled: Double, times: BenchTimes = .lastTenMinutes) {
        self.rng = seed | 1
        self.nonce = nonce
        self.ppe = ppe
        self.disabled = disabled
        self.times = times
    }

    static let apps = [
        ("com.contoso.outlook", "4.2411.0"), ("com.microsoft.teams", "6.21.1"), ("com.contoso.crm", "2.3.7"),
        ("com.microsoft.office.word", "2.91.2"), ("com.contoso.expenses", "1.14.0"), ("com.microsoft.edge", "131.2903.70"),
    ]
    static let statusMix: [(Int, Int)] = [(100, 45), (101, 35), (200, 5), (203, 4), (205, 3), (212, 4), (216, 4)]
    static let operations = [
        ("policyCheckIn", "autoEnrollOnLaunch"), ("enrollment", "registerAndEnrollAccount"),
        ("mamServiceLookup", "lookupMAMServiceURL"), ("policyCheckIn", "periodicCheckIn"), ("unenrollment", "deRegisterAndUnenrollAccount"),
    ]
    static let actions = ["wipe", "selectiveWipe", "policyRefresh", "pinPrompt", "conditionalLaunchBlock", "saveAsBlocked"]
    static let management = [("MAM-WE", 60), ("MDM", 30), ("Unmanaged", 10)]
    static let logTemplates = [
        ("Identity", "Acquired token for resource https://msmamservice.api.application.com in %d ms"),
        ("MAMPolicyManager", "Policy check-in completed: %d policies applied, no changes"),
        ("Enrollment", "Enrollment state is enrolled; next check-in in %d s"),
        ("MAMFileProtection", "Protected %d files in app container with class CompleteUntilFirstUserAuthentication"),
        ("ConditionalLaunch", "Conditional launch evaluation passed (%d rules)"),
    ]

    mutating func next() -> UInt64 {
        rng &+= 0x9E37_79B9_7F4A_7C15
        var z = rng
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    mutating func chance(_ p: Double) -> Bool { Double(next() % 1_000_000) < p * 1_000_000 }
    mutating func weighted<T>(_ items: [(T, Int)]) -> T {
        var r = below(items.reduce(0) { $0 + $1.1 })
        for (v, w) in items {
            if r < w { return v }
            r -= w
        }
        return items[0].0
    }

    /// Stable GUID-looking ids so the same device keeps its id across records.
    static func guid(_ kind: UInt64, _ n: Int) -> String {
        var h = kind &* 0x1000_0000_01B3 ^ UInt64(n) &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 29
        let a = String(h, radix: 16).leftPad(16)
        let b = String(h &* 0xBF58_476D_1CE4_E5B9, radix: 16).leftPad(16)
        let s = Array(a + b)
        return "\(String(s[0..<8]))-\(String(s[8..<12]))-4\(String(s[13..<16]))-a\(String(s[17..<20]))-\(String(s[20..<32]))"
    }

    mutating func time() -> String {
        let ms = times.startMs + Int64(below(Int(times.spanMs)))
        let date = Date(timeIntervalSince1970: Double(ms) / 1000)
        var t = time_t(ms / 1000)
        var tmv = tm()
        gmtime_r(&t, &tmv)
        _ = date
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(tmv.tm_year) + 1900, Int(tmv.tm_mon) + 1, Int(tmv.tm_mday),
            Int(tmv.tm_hour), Int(tmv.tm_min), Int(tmv.tm_sec), Int(ms % 1000))
    }

    mutating func event(into out: inout [UInt8], id: UInt64) {
        let (app, version) = Self.apps[below(Self.apps.count)]
        let device = below(20_000)
        let user = device % 15_000
        let kind = below(100)
        var settings = "\"VerboseLoggingEnabled\":\"\(chance(0.1) ? "YES" : "NO")\""
        if chance(ppe) { settings += ",\"MAMTelemetryUsePPE\":\"YES\"" }
        if chance(disabled) { settings += ",\"MAMTelemetryDisabled\":\"YES\"" }
        let name: String
        let data: String
        if kind < 50 {
            name = "EnrollmentCall"
            let code = weighted(Self.statusMix)
            let (op, api) = Self.operations[below(Self.operations.count)]
            data =
                "{\"operation\":\"\(op)\",\"api\":\"\(api)\",\"statusCode\":\(code),\"didSucceed\":\(code == 100 || code == 101 ? "true" : "false"),\"durationMs\":\(80 + below(900))}"
        } else if kind < 80 {
            name = "AppLaunch"
            data = "{\"managementType\":\"\(weighted(Self.management))\",\"coldStart\":\(chance(0.3)),\"launchMs\":\(200 + below(1500))}"
        } else {
            name = "IntuneAction"
            data = "{\"action\":\"\(Self.actions[below(Self.actions.count)])\",\"initiatedBy\":\"\(chance(0.8) ? "admin" : "system")\"}"
        }
        let line =
            "{\"name\":\"\(name)\",\"time\":\"\(time())\",\"appId\":\"\(app)\",\"appVersion\":\"\(version)\",\"sdkVersion\":\"19.6.\(below(3))\",\"platform\":\"\(device % 3 == 0 ? "Android" : "iOS")\",\"deviceId\":\"\(Self.guid(1, device))\",\"sessionId\":\"\(Self.guid(2, device * 7 + below(4)))\",\"identity\":\"user\(user)@contoso.com\",\"accountId\":\"\(Self.guid(3, user))\",\"tenantId\":\"\(Self.guid(4, user % 5))\",\"eventId\":\"\(String(nonce, radix: 16))-\(String(id, radix: 16))\",\"settings\":{\(settings)},\"data\":\(data)}\n"
        out.append(contentsOf: line.utf8)
    }

    mutating func log(into out: inout [UInt8]) {
        let (app, _) = Self.apps[below(Self.apps.count)]
        let r = logRecord(device: below(20_000))
        let line =
            "{\"time\":\"\(r.time)\",\"level\":\"\(r.verbose ? "verbose" : "info")\",\"message\":\"\(r.message)\",\"appId\":\"\(app)\",\"deviceId\":\"\(r.deviceId)\",\"sessionId\":\"\(r.sessionId)\",\"component\":\"\(r.component)\"}\n"
        out.append(contentsOf: line.utf8)
    }

    /// One diagnostic log record of `device`, the same draw for NDJSON and OTLP bodies.
    mutating func logRecord(device: Int) -> BenchLogRecord {
        let (component, template) = Self.logTemplates[below(Self.logTemplates.count)]
        let message = template.replacingOccurrences(of: "%d", with: String(1 + below(900)))
        let time = time()
        let verbose = chance(0.6)
        return BenchLogRecord(
            time: time, verbose: verbose, message: message, deviceId: Self.guid(1, device),
            sessionId: Self.guid(2, device * 7 + below(4)), component: component)
    }

    static func dump(to directory: String, records: Int, nonce: UInt64, ppe: Double, disabled: Double) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var gen = BenchData(seed: nonce, nonce: nonce, ppe: ppe, disabled: disabled)
        var events: [UInt8] = []
        var logs: [UInt8] = []
        for i in 0..<records {
            gen.event(into: &events, id: UInt64(i))
            gen.log(into: &logs)
        }
        try Data(events).write(to: URL(fileURLWithPath: directory + "/events.ndjson"))
        try Data(logs).write(to: URL(fileURLWithPath: directory + "/logs.ndjson"))
    }
}

extension String {
    fileprivate func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
