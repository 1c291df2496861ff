import Foundation

struct BenchData {
    var rng: SplitMix64
    let nonce: UInt64
    let ppe: Double
    let disabled: Double
    let times: BenchTimes

    init(seed: UInt64, nonce: UInt64, ppe: Double, disabled: Double, times: BenchTimes = .lastTenMinutes) {
        self.rng = SplitMix64(seed: seed | 1)
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

    mutating func next() -> UInt64 { rng.next() }
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

    /// A random time in the window.
    mutating func time() -> String {
        Self.timestamp(times.startMs + Int64(below(Int(times.spanMs))))
    }

    /// `ms` since the epoch as the SDK writes it (UTC, milliseconds).
    static func timestamp(_ ms: Int64) -> String {
        var t = time_t(ms / 1000)
        var tmv = tm()
        gmtime_r(&t, &tmv)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(tmv.tm_year) + 1900, Int(tmv.tm_mon) + 1, Int(tmv.tm_mday),
            Int(tmv.tm_hour), Int(tmv.tm_min), Int(tmv.tm_sec), Int(ms % 1000))
    }

    /// One event of the GUID-heavy data set: every field drawn on its own, so a request mixes
    /// 500 devices, apps and sessions (the fleet data set, `BenchFleet`, keeps them together).
    mutating func event(into out: inout [UInt8], id: UInt64) {
        let (app, version) = Self.apps[below(Self.apps.count)]
        let device = below(20_000)
        let kind = below(100)
        // The draws keep the order they always had, so a seed still gives the same data.
        let settings = settings()
        let name: String
        let data: String
        if kind < 50 {
            name = "EnrollmentCall"
            data = enrollmentData(code: weighted(Self.statusMix))
        } else if kind < 80 {
            name = "AppLaunch"
            data = launchData(management: weighted(Self.management))
        } else {
            name = "IntuneAction"
            data = actionData()
        }
        let event = BenchEvent(
            name: name, time: time(), app: app, version: version, sdkPatch: below(3), device: device,
            session: device * 7 + below(4), user: device % 15_000, settings: settings, data: data)
        event.write(into: &out, nonce: nonce, id: id)
    }

    /// The `settings` members: verbose logging on one device in ten, PPE and opt-out by the fractions asked for.
    mutating func settings() -> String {
        var settings = "\"VerboseLoggingEnabled\":\"\(chance(0.1) ? "YES" : "NO")\""
        if chance(ppe) { settings += ",\"MAMTelemetryUsePPE\":\"YES\"" }
        if chance(disabled) { settings += ",\"MAMTelemetryDisabled\":\"YES\"" }
        return settings
    }

    mutating func enrollmentData(code: Int) -> String {
        let (op, api) = Self.operations[below(Self.operations.count)]
        return
            "{\"operation\":\"\(op)\",\"api\":\"\(api)\",\"statusCode\":\(code),\"didSucceed\":\(code == 100 || code == 101 ? "true" : "false"),\"durationMs\":\(80 + below(900))}"
    }

    mutating func launchData(management: String) -> String {
        "{\"managementType\":\"\(management)\",\"coldStart\":\(chance(0.3)),\"launchMs\":\(200 + below(1500))}"
    }

    mutating func actionData() -> String {
        "{\"action\":\"\(Self.actions[below(Self.actions.count)])\",\"initiatedBy\":\"\(chance(0.8) ? "admin" : "system")\"}"
    }

    mutating func log(into out: inout [UInt8]) {
        let (app, _) = Self.apps[below(Self.apps.count)]
        log(into: &out, app: app, device: below(20_000))
    }

    /// One diagnostic log line of `device` running `app`.
    mutating func log(into out: inout [UInt8], app: String, device: Int) {
        let r = logRecord(device: device)
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

    /// `count` events or log records of a data set drawn record by record (not the fleet's
    /// device batches); `idBase` makes the events' `eventId`s unique.
    mutating func records(of dataSet: BenchDataSet, logs: Bool, count: Int, idBase: UInt64, into out: inout [UInt8]) {
        switch (dataSet, logs) {
        case (.verbose, true):
            verboseLogs(into: &out, count: count)
        case (.small, false):
            for r in 0..<count { smallEvent(into: &out, id: idBase | UInt64(r)) }
        case (_, true):
            for _ in 0..<count { log(into: &out) }
        case (_, false):
            for r in 0..<count { event(into: &out, id: idBase | UInt64(r)) }
        }
    }

    /// Writes `records` events and log records of `dataSet` as events.ndjson and logs.ndjson
    /// (for the baselines); the fleet set is written request by request, `batchSize` at a time.
    static func dump(
        to directory: String, records: Int, nonce: UInt64, ppe: Double, disabled: Double, dataSet: BenchDataSet = .guid,
        batchSize: Int = 500
    ) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var gen = BenchData(seed: nonce, nonce: nonce, ppe: ppe, disabled: disabled)
        var events: [UInt8] = []
        var logs: [UInt8] = []
        switch dataSet {
        case .guid:
            // One event, then one log record: the order of draws a seed has always given.
            for i in 0..<records {
                gen.event(into: &events, id: UInt64(i))
                gen.log(into: &logs)
            }
        case .small, .verbose:
            gen.records(of: dataSet, logs: false, count: records, idBase: 0, into: &events)
            gen.records(of: dataSet, logs: true, count: records, idBase: 0, into: &logs)
        case .fleet:
            for start in stride(from: 0, to: records, by: max(batchSize, 1)) {
                let n = min(max(batchSize, 1), records - start)
                for request in gen.fleetRequests(count: n, logs: false, idBase: UInt64(start)) { events += request.body }
                for request in gen.fleetRequests(count: n, logs: true, idBase: 0) { logs += request.body }
            }
        }
        try Data(events).write(to: URL(fileURLWithPath: directory + "/events.ndjson"))
        try Data(logs).write(to: URL(fileURLWithPath: directory + "/logs.ndjson"))
    }
}

extension String {
    func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: "0", count: n - count) + self }
}
