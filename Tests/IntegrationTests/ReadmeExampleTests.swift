import Foundation
import TestSupport
import Testing

/// The README's runnable examples (a fenced `sh` block after `<!-- readme-test: run -->`)
/// are run exactly as printed, with bash, against a live daemon: only the environment the
/// examples themselves read is set (`MAMTELEMETRY_URL`, `MAMTELEMETRY_TOKEN`, and `PATH`
/// with the built `mamtelemetryctl`), so a README that drifts from the CLI or the API fails here.
@Suite struct ReadmeExampleTests {
    static let marker = "<!-- readme-test: run -->"

    /// The text of every fenced block that directly follows the marker.
    static func runnableBlocks(_ readme: String) -> [String] {
        readme.components(separatedBy: marker).dropFirst().compactMap { rest in
            let lines = rest.split(separator: "\n", omittingEmptySubsequences: false).drop { $0.isEmpty }
            guard lines.first == "```sh" else { return nil }
            return lines.dropFirst().prefix { $0 != "```" }.joined(separator: "\n")
        }
    }

    @Test func readmeExamplesRunAsPrinted() async throws {
        let readme = try String(contentsOf: DaemonProcess.packageRoot.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = Self.runnableBlocks(readme)
        #expect(readme.components(separatedBy: Self.marker).count - 1 == blocks.count, "a marker is not followed by a ```sh block")
        try #require(!blocks.isEmpty, "no README block is marked \(Self.marker)")

        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        let path =
            DaemonProcess.binary.deletingLastPathComponent().path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        for block in blocks {
            let run = try BundleFleet.system(
                "/bin/bash", ["-euo", "pipefail", "-c", block], in: d.dataDirectory,
                environment: ["MAMTELEMETRY_URL": d.baseURL, "MAMTELEMETRY_TOKEN": d.adminToken ?? "", "PATH": path, "NO_COLOR": "1"])
            #expect(run.status == 0, "README block failed (\(run.status)):\n\(block)\n--- stdout\n\(run.stdout)\n--- stderr\n\(run.stderr)")
            // What the README says the commands print, they print.
            if block.contains("/v1/telemetry"), !block.contains("bundle --incident") {
                #expect(run.stdout.contains(#""accepted":2"#), "\(run.stdout)")
                #expect(run.stdout.contains("AppLaunch") && run.stdout.contains("EnrollmentCall"), "\(run.stdout)")
                #expect(run.stdout.contains("[Enrollment] token expired"), "\(run.stdout)")
                #expect(run.stdout.contains(#""eventId":"e-2""#), "the ndjson example: \(run.stdout)")
            }
            // The support engineer's walk-through tells the story it promises.
            if block.contains("bundle --incident") {
                for expected in [
                    "The app says I am not licensed",  // incidents: what the user wrote (admin token: pii)
                    "Enrollment failed: the account has no Intune license",  // her device's log, in her view
                    "AccountNotLicensed (200): The user's tenant uses app protection, but the user has no Intune license.",
                    "Assign an Intune license to the user",
                    "device 4f0e2a1b: matched 4F0E2A1B-7C3D-4E5F-8A9B-0C1D2E3F4A5B",
                    "nearest ids: 4F0E2A1B-7C3D-4E5F-8A9B-0C1D2E3F4A5B",
                    "story:     device 4F0E2A1B-7C3D-4E5F-8A9B-0C1D2E3F4A5B around the upload",
                    "checksums: OK", "UPLOAD          MAM-", "(shared in MAM-",
                    "-> next step: Assign an Intune license to the user",
                    "100.0% of 1",  // stats apps: the rate beside its volume
                ] {
                    #expect(run.stdout.contains(expected), "walk-through output lacks '\(expected)':\n\(run.stdout)")
                }
                // Her story takes in her device, asked by UPN and by pseudonym as a token without
                // pii asks (the list's order is the backend's: newest batch or newest record first).
                for user in ["jane@contoso\\.com", "user-[0-9a-f]{24}"] {
                    let line = #"user \#(user): with the records of the devices they used: [^\n]*4F0E2A1B-7C3D-4E5F-8A9B-0C1D2E3F4A5B"#
                    #expect(run.stdout.range(of: line, options: .regularExpression) != nil, "no '\(line)' in:\n\(run.stdout)")
                }
                // --around keeps the level filter: the info line is not in the moment's view.
                let afterCodes = run.stdout.components(separatedBy: "200   AccountNotLicensed").last ?? ""
                let moment = afterCodes.components(separatedBy: "device 4f0e2a1b: matched").first ?? ""
                #expect(moment.contains("Enrollment failed") && moment.contains("No policy cached"), "\(moment)")
                #expect(!moment.contains("Next enrollment attempt"), "\(moment)")
            }
        }
    }
}
