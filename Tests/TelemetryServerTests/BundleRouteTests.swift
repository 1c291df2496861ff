import Foundation
import TestSupport
import Testing

@testable import TelemetryServer

/// Diagnostic bundles as `GET /v1/bundles` serves them (SPEC §6), read with the system's
/// `unzip` and `tar`: each scope holds exactly what the query API returns for it, PPE stays
/// apart, and without `pii` no UPN or e-mail address is anywhere in the archive. In process;
/// `mamtelemetryctl bundle` (its summary, default name, progress line and `verify`) is
/// IntegrationTests.ControlCLITests.
@Suite struct BundleRouteTests {
    typealias Fleet = BundleFleetFixture

    /// An incident bundle tells the device's story: its telemetry and logs from two days before
    /// the upload to an hour after, and every record the user shared.
    @Test func incidentBundleHasTheDevicesStoryAndOpensWithUnzip() async throws {
        try await IngestHarness.run { h in
            let fleet = try await Fleet.store(through: h)
            let device = fleet.devices[0]
            let bundle = try await h.bundle("incident=\(fleet.incident)", token: fleet.bundleToken)
            let expectedLogs = try await Fleet.ids("/v1/logs?device=\(device)", member: "logs", through: h)
                .union(try await Fleet.ids("/v1/logs?incident=\(fleet.incident)", member: "logs", through: h))
            let expectedEvents = try await Fleet.ids("/v1/events?device=\(device)", member: "events", through: h)
            #expect(expectedLogs.count == 5 && expectedEvents.count == 3)
            #expect(try SystemCommand.run("/usr/bin/unzip", ["-t", bundle.path]).status == 0)
            #expect(
                Set(bundle.members.keys).isSuperset(of: [
                    "manifest.json", "telemetry.ndjson", "logs.ndjson", "timeline.txt", "summary.json", "incident.json",
                ]))
            #expect(Fleet.ids(bundle.members["logs.ndjson"]) == expectedLogs)
            #expect(Fleet.ids(bundle.members["telemetry.ndjson"]) == expectedEvents)
            let timeline = String(decoding: bundle.members["timeline.txt"] ?? [], as: UTF8.self)
            #expect(timeline.contains("PolicyEndPointNetworkFailure"))
            #expect(timeline.contains("-> next step: Check the device's network, proxy and firewall access"), "\(timeline)")
            #expect(timeline.contains("UPLOAD          \(fleet.incident): the user shared 3 log records with support"), "\(timeline)")
            print("----- timeline.txt (\(fleet.incident)) -----\n\(timeline)----- end -----")
        }
    }

    @Test func deviceAndIdentityBundlesMatchTheQueryAPIAndKeepPPEApart() async throws {
        try await IngestHarness.run { h in
            let fleet = try await Fleet.store(through: h)
            let d = fleet.devices
            // Device A as tar.gz: exactly /v1/events and /v1/logs for device A, nothing from PPE.
            let deviceA = try await h.bundle("device=\(d[0])&format=tar.gz&since=-2h", token: fleet.bundleToken)
            let listing = try SystemCommand.run("/usr/bin/tar", ["tzf", deviceA.path])
            #expect(listing.status == 0)
            #expect(listing.stdout.contains("telemetry.ndjson") && listing.stdout.contains("manifest.json"))
            #expect(
                Fleet.ids(deviceA.members["telemetry.ndjson"])
                    == (try await Fleet.ids("/v1/events?device=\(d[0])", member: "events", through: h)))
            #expect(
                Fleet.ids(deviceA.members["logs.ndjson"]) == (try await Fleet.ids("/v1/logs?device=\(d[0])", member: "logs", through: h)))
            #expect(Fleet.ids(deviceA.members["telemetry.ndjson"]).count == 3)
            #expect(!Fleet.contains(deviceA.members, fleet.ppeMarker))
            #expect(!Fleet.contains(deviceA.members, d[1]))
            let timeline = String(decoding: deviceA.members["timeline.txt"] ?? [], as: UTF8.self)
            #expect(
                timeline.contains("EnrollmentCall  enroll via registerAndEnrollAccount -> PolicyEndPointNetworkFailure (212) FAILED"),
                "\(timeline)")
            let stamps = timeline.split(separator: "\n").compactMap { $0.first?.isNumber == true ? $0.prefix(24) : nil }
            #expect(stamps.count >= 5 && stamps == stamps.sorted(), "timeline out of order: \(stamps)")
            print("----- timeline.txt (device \(d[0])) -----\n\(timeline)----- end -----")

            // The same device in PPE: exactly its PPE events.
            let ppe = try await h.bundle("device=\(d[0])&env=ppe", token: fleet.bundleToken)
            let ppeIDs = try await Fleet.ids("/v1/events?env=ppe&device=\(d[0])", member: "events", through: h)
            #expect(ppeIDs.count == 2)
            #expect(Fleet.ids(ppe.members["telemetry.ndjson"]) == ppeIDs)
            #expect(Fleet.contains(ppe.members, fleet.ppeMarker))

            // Identity, in another casing: devices A and C (Alice), never B (Bob). A token without
            // pii names the user by pseudonym (a UPN is refused to it).
            let upn = "ALICE.smith@contoso.COM"
            let query = "identity=" + (upn.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? upn)
            let identity = try await h.bundle("identity=\(try await h.pseudonym(of: upn))", token: fleet.bundleToken)
            let events = try await Fleet.ids("/v1/events?\(query)", member: "events", through: h)
            let logs = try await Fleet.ids("/v1/logs?\(query)", member: "logs", through: h)
            #expect(events.count == 6 && logs.count == 7)
            #expect(Fleet.ids(identity.members["telemetry.ndjson"]) == events)
            #expect(Fleet.ids(identity.members["logs.ndjson"]) == logs)
            #expect(!Fleet.contains(identity.members, d[1]))
            #expect(!Fleet.contains(identity.members, fleet.ppeMarker))
        }
    }

    @Test func withoutPIINoUPNOrEmailAnywhereWithPIIRawValues() async throws {
        try await IngestHarness.run { h in
            let fleet = try await Fleet.store(through: h)
            let d = fleet.devices
            let alice = try await h.pseudonym(of: Fleet.alice)
            for (scope, format) in [("device=\(d[0])", "zip"), ("incident=\(fleet.incident)", "tar.gz"), ("identity=\(alice)", "zip")] {
                let b = try await h.bundle("\(scope)&format=\(format)", token: fleet.bundleToken)
                let raw = try [UInt8](Data(contentsOf: URL(fileURLWithPath: b.path)))
                for secret in Fleet.personalData {
                    #expect(!Fleet.lowered(raw).contains(secret), "\(secret) in the archive bytes of \(scope)")
                    #expect(!Fleet.contains(b.members, secret), "\(secret) in a member of \(scope)")
                }
            }
            // Pseudonyms are stable: two bundles give Alice's records the same pseudonym.
            let first = try await h.bundle("device=\(d[0])", token: fleet.bundleToken)
            let second = try await h.bundle("device=\(d[2])", token: fleet.bundleToken)
            let p1 = Fleet.identities(first.members["telemetry.ndjson"])
            let p2 = Fleet.identities(second.members["telemetry.ndjson"])
            #expect(p1.count == 1 && p1 == p2 && !(p1.first ?? "").contains("@"), "\(p1) vs \(p2)")

            let pii = try await h.bundle("device=\(d[0])", token: fleet.piiToken)
            #expect(Fleet.contains(pii.members, "alice.smith@contoso.com"))
            #expect(Fleet.contains(pii.members, "carol@example.org"))
            #expect(Fleet.identities(pii.members["telemetry.ndjson"]) == ["Alice.Smith@Contoso.com"])
            let manifest = parseJSON(pii.members["manifest.json"] ?? [])
            #expect(manifest["caller"] as? String ?? "" == "support-pii (token \(fleet.piiTokenID))")
            #expect((manifest["redaction"] as? [String: Any])?["piiAllowed"] as? Bool == true)
        }
    }
}
