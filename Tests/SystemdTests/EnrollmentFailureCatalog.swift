import Foundation
import Systemd
import TelemetryModel

/// The catalog entries that explain the journal's failed-enrollment entries, one per failure
/// code, written from the same table the API and CLI explain with (`EnrollmentStatus.all`).
/// `CatalogTests` checks that `systemd/mamtelemetryd.catalog` holds exactly this text, and
/// writes it there when run with `MAMTELEMETRY_UPDATE_CATALOG=1`.
enum EnrollmentFailureCatalog {
    static let begin = "# --- enrollment failure codes (generated from EnrollmentStatus.all; see CatalogTests) ---"
    static let end = "# --- end of enrollment failure codes ---"

    static func section() -> String {
        var out = [begin, ""]
        for code in EnrollmentFailureMessageID.documentedCodes {
            let e = EnrollmentStatus.explanation(of: code)!
            out += entry(
                id: EnrollmentFailureMessageID.id(for: code), subject: "Enrollment failed with \(e.name) (\(code))",
                opening: "with \(e.name) (\(code))",
                body: ["What it means: \(e.meaning)", "", "Next step: \(e.nextStep)"], code: "\(code)")
        }
        out += entry(
            id: EnrollmentFailureMessageID.id(for: nil), subject: "Enrollment failed with an undocumented status code",
            opening: "with a status code the SDK does not document, or none,",
            body: [
                "What it means: the SDK documentation does not list these codes (one entry",
                "per app and minute holds them all; its MAM_STATUS_CODE fields name up to",
                "three, none when the calls carried no code), so the daemon cannot say",
                "more than that they failed.",
                "",
                "Next step: read the calls' errorString and the devices' error logs",
                "around the minute; a new SDK version may have added the code.",
            ], code: nil)
        out.append(end)
        return out.joined(separator: "\n") + "\n"
    }

    static func entry(id: String, subject: String, opening: String, body: [String], code: String?) -> [String] {
        [
            "-- \(id)",
            "Subject: \(subject)",
            "Defined-By: mamtelemetryd",
            "Support: file:///usr/share/doc/mamtelemetryd/README.systemd.md",
            "Documentation: file:///usr/share/doc/mamtelemetryd/README.systemd.md",
            "",
            "@MAM_FAILED_CALLS@ enrollment calls of @MAM_APP_ID@ (@MAM_ENV@) failed",
            "\(opening) in the minute from @MAM_MINUTE@.",
            "",
        ] + body + [
            "",
            "The SDK retries a failed enrollment 24 hours later. Example devices are in",
            "this entry's MAM_DEVICE_ID fields: `mamtelemetryctl logs --device ID",
            "--around @MAM_MINUTE@` shows what one logged around the failure"
                + (code.map { ", and\n`mamtelemetryctl status-codes \($0)` prints this explanation." } ?? "."),
            "",
        ]
    }
}
