public import TelemetryModel

extension JournalEntry {
    /// The journal entry for the failed enrollment calls of one app, status code and minute
    /// (see ``EnrollmentFailureDigest``): a warning with the code's `MESSAGE_ID`, so
    /// `journalctl -x` adds the catalog's explanation and next step. Fields:
    /// `MAM_APP_ID` (left out for the calls of apps past the per-minute cap), `MAM_ENV`,
    /// `MAM_STATUS_CODE` and `MAM_STATUS_NAME` (left out when the calls carried none),
    /// `MAM_FAILED_CALLS`, `MAM_MINUTE` (the minute of arrival, RFC 3339) and one
    /// `MAM_DEVICE_ID` per example device, so `journalctl MAM_DEVICE_ID=…` finds the entry too.
    /// App and device values come as a reader without the `pii` scope sees them.
    public static func enrollmentFailures(
        app: String?, env: TelemetryEnvironment, code: Int?, minute: Int64, calls: Int, exampleDevices: [String],
        identifier: String = JournalEntry.daemonIdentifier
    ) -> JournalEntry {
        enrollmentFailures(
            app: app, env: env, status: code.map(EnrollmentStatus.label(of:)) ?? "no status code", codes: code.map { [$0] } ?? [],
            messageID: EnrollmentFailureMessageID.id(for: code), minute: minute, calls: calls, exampleDevices: exampleDevices,
            identifier: identifier)
    }

    /// The entry for the failed calls of one app and minute whose codes the SDK does not
    /// document, all together: one `MAM_STATUS_CODE` per example code (a few; `moreCodes` says
    /// there were others), and the undocumented code's `MESSAGE_ID`.
    public static func enrollmentFailures(
        app: String?, env: TelemetryEnvironment, undocumentedCodes: [Int], moreCodes: Bool, minute: Int64, calls: Int,
        exampleDevices: [String], identifier: String = JournalEntry.daemonIdentifier
    ) -> JournalEntry {
        let listed = undocumentedCodes.map(String.init).joined(separator: ", ")
        return enrollmentFailures(
            app: app, env: env,
            status: "undocumented status code\(undocumentedCodes.count == 1 && !moreCodes ? "" : "s") \(listed)\(moreCodes ? ", …" : "")",
            codes: undocumentedCodes, messageID: EnrollmentFailureMessageID.id(for: nil), minute: minute, calls: calls,
            exampleDevices: exampleDevices, identifier: identifier)
    }

    private static func enrollmentFailures(
        app: String?, env: TelemetryEnvironment, status: String, codes: [Int], messageID: String, minute: Int64, calls: Int,
        exampleDevices: [String], identifier: String
    ) -> JournalEntry {
        let stamp = Timestamp.format(milliseconds: minute)
        let examples =
            exampleDevices.isEmpty ? "" : " (devices \(exampleDevices.joined(separator: ", "))\(calls > exampleDevices.count ? ", …" : ""))"
        let subject = app ?? "apps past the per-minute limit"
        var entry = JournalEntry()
        entry.append(
            "MESSAGE",
            "\(subject): \(calls) failed enrollment call\(calls == 1 ? "" : "s") with \(status) in the minute from \(stamp)\(examples)")
        entry.append("MESSAGE_ID", messageID)
        entry.append("PRIORITY", String(LogLevel.warning.syslogPriority))
        entry.append("SYSLOG_IDENTIFIER", identifier)
        if let app { entry.append("MAM_APP_ID", app) }
        entry.append("MAM_ENV", env.rawValue)
        for code in codes { entry.append("MAM_STATUS_CODE", String(code)) }
        if codes.count == 1, let name = EnrollmentStatus.name(of: codes[0]) { entry.append("MAM_STATUS_NAME", name) }
        entry.append("MAM_FAILED_CALLS", String(calls))
        entry.append("MAM_MINUTE", stamp)
        for device in exampleDevices { entry.append("MAM_DEVICE_ID", device) }
        return entry
    }
}
