import Foundation
import TestSupport
import Testing

/// Failed enrollment calls in the real journal (issue 24): the built daemon inside the
/// journald harness writes one entry per app, status code and minute — not one per event —
/// with the code's MESSAGE_ID, so `journalctl -x MAM_APP_ID=…` explains each failure with the
/// shipped catalog. The aggregation itself is checked in process (TelemetryServerTests).
@Suite(.serialized, .enabled(if: JournaldHarness.isAvailable, "needs root, unshare and systemd-journald"))
struct EnrollmentFailureJournalIntegrationTests {
    /// `EnrollmentFailureMessageID` of 200 and 225 (this target does not link `Systemd`).
    static let accountNotLicensedID = "98b4e757220d470bbf6251f248700200"
    static let licensedNotTargetedID = "98b4e757220d470bbf6251f248700225"

    @Test func journalctlExplainsFailedEnrollmentsInPlace() async throws {
        let harness = try JournaldHarness()
        defer { harness.remove() }
        let (d, daemon) = try await harness.launchDaemon()
        defer { try? FileManager.default.removeItem(at: d.dataDirectory) }
        defer { JournaldMirrorTests.stop(daemon, harness) }

        let app = "com.contoso.journal-\(UUID().uuidString.prefix(8).lowercased())"
        var lines: [String] = []
        for i in 0..<60 {
            lines.append(
                #"{"name":"EnrollmentCall","appId":"\#(app)","deviceId":"dev-\#(i % 7)","data":{"operation":"enroll","statusCode":200,"didSucceed":false}}"#
            )
        }
        for i in 0..<4 {
            lines.append(
                #"{"name":"EnrollmentCall","appId":"\#(app)","deviceId":"dev-t\#(i)","data":{"operation":"enroll","statusCode":225}}"#)
            lines.append(
                #"{"name":"EnrollmentCall","appId":"\#(app)","deviceId":"dev-ok\#(i)","data":{"operation":"enroll","statusCode":100}}"#)
        }
        // One request: one receive time, so one minute.
        let (status, answer, _) = try await d.post("/v1/telemetry", body: Array(lines.joined(separator: "\n").utf8))
        #expect(status == 200, "\(String(decoding: answer, as: UTF8.self))")

        // A graceful stop sends the minute still open.
        JournaldMirrorTests.terminateCommand(of: harness, daemon)
        #expect(JournaldMirrorTests.waitForExit(daemon, timeout: 20), "harness did not exit")

        let entries = try harness.entries(["MAM_APP_ID=\(app)"])
        #expect(entries.count == 2, "one entry per code, not one per call: \(entries.map { $0["MESSAGE"] ?? "" })")
        let notLicensed = try #require(entries.first { $0["MAM_STATUS_CODE"] == "200" })
        #expect(notLicensed["MESSAGE_ID"] == Self.accountNotLicensedID)
        #expect(notLicensed["MAM_FAILED_CALLS"] == "60")
        #expect(notLicensed["MAM_STATUS_NAME"] == "AccountNotLicensed")
        #expect(notLicensed["PRIORITY"] == "4")
        #expect(notLicensed["MAM_DEVICE_ID"]?.split(separator: "\n").count == 3, "\(notLicensed)")
        let notTargeted = try #require(entries.first { $0["MAM_STATUS_CODE"] == "225" })
        #expect(notTargeted["MESSAGE_ID"] == Self.licensedNotTargetedID)
        #expect(notTargeted["MAM_FAILED_CALLS"] == "4")

        let root = try JournaldMirrorTests.buildCatalogDatabase()
        defer { try? FileManager.default.removeItem(at: root) }
        let explained = try JournaldMirrorTests.explain(
            harness, database: root.appendingPathComponent("var/lib/systemd/catalog/database"), match: "MAM_APP_ID=\(app)")
        #expect(explained.status == 0, "\(explained.standardError)")
        let text = explained.standardOutput
        #expect(text.contains("Enrollment failed with AccountNotLicensed (200)"), "\(text)")
        #expect(text.contains("Assign an Intune license to the user"), "\(text)")
        #expect(text.contains("60 enrollment calls of \(app) (prod) failed"), "fields substituted: \(text)")
        #expect(text.contains("Enrollment failed with LicensedNotTargeted (225)"), "\(text)")
        #expect(text.contains("Assign an app protection policy covering this app"), "\(text)")
    }
}
