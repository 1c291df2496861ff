import Foundation
import TestSupport
import Testing

/// SIGKILL during ingest, several rounds: every acknowledged event is there after each
/// restart, nothing is duplicated, and no batch is half-visible (issue 2, SPEC §4).
@Suite(.serialized) struct CrashDurabilityTests {
    actor Acked {
        var ids = Set<String>()
        func add(_ batch: [String]) { ids.formUnion(batch) }
    }

    @Test func killNineDuringIngestLosesNothingAcknowledged() async throws {
        let d = try DaemonProcess()
        defer { d.cleanUp() }
        let acked = Acked()
        for round in 0..<3 {
            try await d.start()
            let deadline = Date().addingTimeInterval(1.5)
            await withTaskGroup(of: Void.self) { group in
                for client in 0..<6 {
                    group.addTask {
                        var n = 0
                        while Date() < deadline {
                            let ids = (0..<50).map { "r\(round)-c\(client)-\(n)-\($0)" }
                            n += 1
                            let body = ids.map {
                                #"{"name":"AppLaunch","appId":"com.crash","deviceId":"d","eventId":"\#($0)","data":{"managementType":"MDM"}}"#
                            }
                            .joined(separator: "\n")
                            if let (status, _, _) = try? await d.post("/v1/telemetry", body: Array(body.utf8)), status == 200 {
                                await acked.add(ids)
                            }
                        }
                    }
                }
                // Kill in the middle of the traffic.
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(900))
                    d.kill(signal: SIGKILL)
                }
            }
            d.kill(signal: SIGKILL)
            let started = Date()
            try await d.start()
            #expect(Date().timeIntervalSince(started) < 10, "start-up after a crash stays short")
            let events = try await d.allEvents()
            let stored = events.compactMap { $0["eventId"] as? String }
            let ackedIDs = await acked.ids
            #expect(ackedIDs.count > 0)
            #expect(Set(stored).count == stored.count, "no duplicates after round \(round)")
            #expect(ackedIDs.isSubset(of: Set(stored)), "round \(round): \(ackedIDs.subtracting(stored).count) acknowledged events lost")
            // No half-visible batch: every request's 50 events are all there or all absent.
            var perRequest: [String: Int] = [:]
            for id in stored { perRequest[id.split(separator: "-").prefix(3).joined(separator: "-"), default: 0] += 1 }
            #expect(perRequest.values.allSatisfy { $0 == 50 })
            d.kill(signal: SIGKILL)
        }
    }
}
