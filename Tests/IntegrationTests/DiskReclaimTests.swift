import Foundation
import TestSupport
import Testing

/// A small disk fills while the daemon runs and nobody intervenes: past the high-water mark
/// the daemon refuses ingest (and logs it), retention deletes the oldest records and gives their pages back to
/// the filesystem until the keep-free floor is met, and ingest is accepted again by itself.
/// What survives is the newest data: every acknowledged record newer than the last one
/// retention removed is still there.
@Suite(.serialized) struct DiskReclaimTests {
    static let mib = 1 << 20

    /// `count` launch events of about 4 KiB each, mostly random text (zlib cannot shrink
    /// it), so the daemon's files grow by about what is sent.
    static func batch(_ request: Int, count: Int) -> [UInt8] {
        let random = FileHandle(forReadingAtPath: "/dev/urandom")
        defer { try? random?.close() }
        let lines = (0..<count).map { i -> String in
            let noise = (random?.readData(ofLength: 3_000) ?? Data()).base64EncodedString()
            return
                #"{"name":"AppLaunch","appId":"com.contoso.reclaim","deviceId":"d","eventId":"r\#(request)-\#(i)","data":{"managementType":"MDM","noise":"\#(noise)"}}"#
        }
        return Array(lines.joined(separator: "\n").utf8)
    }

    /// The disk guard's transition lines (DiskTransitionLog) as the daemon logs them.
    static let refusingLine = "storage high-water: refusing ingest until space returns"
    static let resumedLine = "storage back above high-water: ingest accepted again"

    static func fileSize(_ url: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aFullDiskRecoversByRetentionWithoutAnOperator() async throws {
        let disk = try SmallDisk(megabytes: 64)
        defer { disk.unmount() }
        let mountPoint = disk.mountPoint
        // High-water at 16 MiB free, keep-free floor at 24 MiB. No compaction, so every page
        // given back to the filesystem is retention's doing: that is this test's subject.
        let d = try DaemonProcess(
            dataDirectory: mountPoint.appendingPathComponent("data"),
            extraArguments: [
                "--disk-min-free-bytes", "\(16 * Self.mib)", "--disk-min-free-ratio", "0",
                "--disk-keep-free-bytes", "\(24 * Self.mib)", "--store-compact-after-seconds", "31536000",
            ])
        try await d.start()
        defer { d.kill() }

        // About 24 MiB of acknowledged events, in arrival order.
        var acknowledged: [String] = []
        var request = 0
        while disk.freeBytes > 34 * Self.mib {
            let (status, body, _) = try await d.post("/v1/telemetry", body: Self.batch(request, count: 64))
            try #require(status == 200, "\(String(decoding: body, as: UTF8.self))")
            acknowledged += (0..<64).map { "r\(request)-\($0)" }
            request += 1
        }
        let database = d.dataDirectory.appendingPathComponent("prod/records.sqlite")
        let sizeBefore = Self.fileSize(database)

        // Something else on the disk takes all but 10 MiB at once (fallocate: no guard check
        // can fall halfway through a slow write): below the 16 MiB mark.
        let ballast = try disk.fill(leaving: 10 * Self.mib)

        // The refusal lasts from the guard's first check below the mark until its first check
        // after retention made room: under a second on this store, and shorter than any fixed
        // polling interval when a timer tick lands during retention's pass (two CI runs saw no
        // 507 with 100 ms between posts). So posts follow each other without a pause, and the
        // daemon's own log lines for both transitions are what must be there; the 507 itself,
        // with its message, is pinned down by DiskHighWaterRouteTests through the router.
        var sawRefusal = false
        var accepted = 0
        let start = ContinuousClock.now
        while ContinuousClock.now - start < .seconds(60) {
            let (status, body, headers) = try await d.post("/v1/telemetry", body: Self.batch(request, count: 1))
            if status == 507 {
                if !sawRefusal {
                    let message = ((parseJSON(body)["error"] as? [String: Any])?["message"] as? String) ?? ""
                    #expect(message.contains("disk.keepFreeBytes=\(24 * Self.mib)"), "\(message)")
                    #expect(headers.first(name: "Retry-After") != nil)
                }
                sawRefusal = true
            } else {
                #expect(status == 200, "\(String(decoding: body, as: UTF8.self))")
                acknowledged.append("r\(request)-0")
                accepted += 1
            }
            request += 1
            let log = (try? String(contentsOf: d.logFile, encoding: .utf8)) ?? ""
            if log.contains(Self.resumedLine), status == 200, accepted >= 2 { break }
        }
        let log = (try? String(contentsOf: d.logFile, encoding: .utf8)) ?? ""
        #expect(log.contains(Self.refusingLine), "the daemon never logged refusing ingest after the disk passed its high-water mark")
        try #require(log.contains(Self.resumedLine), "ingest was not accepted again within 60 s, with no operator")
        #expect(FileManager.default.fileExists(atPath: ballast.path), "the test must not have freed anything itself")

        // The space came back to the filesystem, above the keep-free floor. Ingest resumes as
        // soon as free space passes the high-water mark, which retention's first deletions
        // reach; it goes on to the floor by itself, so this waits for it (bounded).
        let settle = ContinuousClock.now
        while disk.freeBytes < 24 * Self.mib, ContinuousClock.now - settle < .seconds(60) {
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(disk.freeBytes >= 24 * Self.mib, "only \(disk.freeBytes) bytes free after retention")
        #expect(
            Self.fileSize(database) < sizeBefore - 8 * Self.mib, "the database did not shrink: \(sizeBefore) -> \(Self.fileSize(database))")

        // Retention took the oldest records and nothing newer than the last one it took.
        let stored = Set(try await d.allEvents(extra: "&app=com.contoso.reclaim").compactMap { $0["eventId"] as? String })
        let firstKept = try #require(acknowledged.firstIndex { stored.contains($0) }, "every record was deleted")
        #expect(firstKept > 0, "retention deleted nothing")
        let missing = acknowledged[firstKept...].filter { !stored.contains($0) }
        #expect(missing.isEmpty, "acknowledged records newer than what retention removed are gone: \(missing.prefix(5))")
        #expect(stored.contains(acknowledged.last!))
        d.stop()
    }
}
