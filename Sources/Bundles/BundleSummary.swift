import Foundation
import StoreCore
import TelemetryModel

/// `summary.json`: what a reader wants before opening the NDJSON — the settings flags seen
/// (telemetry disabled / PPE / verbose), apps, SDK versions and devices, and the enrollment
/// success rate with failure codes by name. Distinct-value sets are capped so a fleet-wide
/// app scope cannot grow them without bound.
struct BundleSummary {
    static let distinctLimit = 1000
    static let captureKeys: Set<String> = Set(
        (AppFlags.Key.telemetryDisabled + AppFlags.Key.usePPE + AppFlags.Key.verboseLogging).map { $0.lowercased() }
            + ["sdkversion"])

    /// The flags' member names as the redactor captures them (lower-cased), made once.
    static let telemetryDisabledKeys = AppFlags.Key.telemetryDisabled.map { $0.lowercased() }
    static let usePPEKeys = AppFlags.Key.usePPE.map { $0.lowercased() }
    static let verboseKeys = AppFlags.Key.verboseLogging.map { $0.lowercased() }
    static let truthy: Set<String> = ["yes", "true", "1"]

    var counts: [RecordKind: Int] = [:]
    var flagCounts: [String: Int] = ["telemetryDisabled": 0, "usePPE": 0, "verbose": 0]
    var apps: [String: Int] = [:]
    var devices: [String: Int] = [:]
    var sdkVersions: [String: Int] = [:]
    var levels: [String: Int] = [:]
    var enrollmentCalls = 0
    var enrollmentSucceeded = 0
    var failures: [Int: Int] = [:]
    var firstTime: Int64?
    var lastTime: Int64?
    var truncated = false

    mutating func add(_ k: RecordKeys, kind: RecordKind, captured: [String: String]) {
        counts[kind, default: 0] += 1
        firstTime = min(firstTime ?? k.time, k.time)
        lastTime = max(lastTime ?? k.time, k.time)
        Self.bump(&apps, k.appId, &truncated)
        if !k.deviceId.isEmpty { Self.bump(&devices, k.deviceId, &truncated) }
        if let v = captured["sdkversion"] { Self.bump(&sdkVersions, v, &truncated) }
        func on(_ keys: [String]) -> Bool {
            keys.contains { key in captured[key].map { Self.truthy.contains($0.lowercased()) } ?? false }
        }
        if on(Self.telemetryDisabledKeys) { flagCounts["telemetryDisabled", default: 0] += 1 }
        if on(Self.usePPEKeys) { flagCounts["usePPE", default: 0] += 1 }
        if on(Self.verboseKeys) || k.level == .verbose { flagCounts["verbose", default: 0] += 1 }
        if kind == .log { levels[(k.level ?? .info).name, default: 0] += 1 }
        if k.name == EventName.enrollmentCall {
            enrollmentCalls += 1
            let ok = k.succeeded ?? k.statusCode.map(EnrollmentStatus.isSuccess) ?? false
            if ok { enrollmentSucceeded += 1 } else if let code = k.statusCode { failures[code, default: 0] += 1 }
        }
    }

    private static func bump(_ set: inout [String: Int], _ key: String, _ truncated: inout Bool) {
        if set[key] == nil, set.count >= distinctLimit {
            truncated = true
            return
        }
        set[key, default: 0] += 1
    }

    /// The story in brief, under the timeline's header: what the enrollment calls did, and
    /// for each failing code what it means and what to do.
    func storyLines() -> [String] {
        guard enrollmentCalls > 0 else { return ["", "No enrollment calls in this window."] }
        let failed = failures.values.reduce(0, +)
        var lines = [
            "",
            "Enrollment: \(enrollmentCalls) call\(enrollmentCalls == 1 ? "" : "s"), \(enrollmentSucceeded) succeeded, \(failed) failed.",
        ]
        for (code, count) in failures.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
            let explained = EnrollmentStatus.explanation(of: code)
            lines.append("  \(EnrollmentStatus.label(of: code)) x\(count): \(explained?.meaning ?? "not a status code the SDK documents.")")
            if let next = explained?.nextStep { lines.append("    next step: \(next)") }
        }
        return lines
    }

    func json() throws -> [UInt8] {
        var enrollment: [String: Any] = ["calls": enrollmentCalls, "succeeded": enrollmentSucceeded]
        enrollment["successRate"] = enrollmentCalls == 0 ? NSNull() : Double(enrollmentSucceeded) / Double(enrollmentCalls)
        // Each failing code with what it means and what support does next (`EnrollmentStatus.all`).
        enrollment["failures"] = failures.keys.sorted().map { code -> [String: Any] in
            let explained = EnrollmentStatus.explanation(of: code)
            return [
                "statusCode": code, "statusName": explained?.name ?? NSNull(), "count": failures[code]!,
                "meaning": explained?.meaning ?? "not a status code the SDK documents", "nextStep": explained?.nextStep ?? NSNull(),
            ]
        }
        let object: [String: Any] = [
            "counts": ["telemetry": counts[.event] ?? 0, "logs": counts[.log] ?? 0],
            "flagsSeen": [
                "telemetryDisabled": flagCounts["telemetryDisabled"]! > 0,
                "usePPE": flagCounts["usePPE"]! > 0,
                "verbose": flagCounts["verbose"]! > 0,
                "recordsWith": flagCounts,
            ],
            "apps": apps, "devices": devices, "sdkVersions": sdkVersions, "logLevels": levels,
            "enrollment": enrollment,
            "firstRecord": firstTime.map(Timestamp.format(milliseconds:)) ?? NSNull(),
            "lastRecord": lastTime.map(Timestamp.format(milliseconds:)) ?? NSNull(),
            "distinctValuesTruncated": truncated,
        ]
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) + [0x0A]
    }
}
