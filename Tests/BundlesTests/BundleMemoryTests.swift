import Archive
import Bundles
import Foundation
import TelemetryModel
import TelemetryStore
import Testing

/// Sizes from `/proc/self/status`, in KiB.
enum ProcessMemory {
    static func field(_ name: String) -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
        }
        return 0
    }

    /// Resets the peak (VmHWM) to the current RSS; false where the kernel does not allow it.
    static func resetPeak() -> Bool {
        guard let h = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? h.close() }
        return (try? h.write(contentsOf: Data("5".utf8))) != nil
    }
}

/// Counts and drops archive bytes: what a client at the other end of the stream sees.
struct CountingSink: BundleSink {
    var bytes: Int64 = 0
    var writes = 0
    var largestWrite = 0

    mutating func write(_ chunk: [UInt8]) async throws {
        bytes += Int64(chunk.count)
        writes += 1
        largestWrite = max(largestWrite, chunk.count)
    }
}

/// Reads the test process's own peak RSS, so `scripts/test.sh` runs this suite in the
/// one-test-at-a-time run: beside another test the peak would be that test's too.
struct BundleMemoryTests {
    /// A ~10 MB and a ~70 MB bundle (24k records of ~3 KiB, random so they do not compress
    /// away) stream through the same process: the peak RSS growth of the large one stays
    /// close to the small one's and far below its size — memory does not grow with the bundle.
    @Test func largeBundleStreamsWithBoundedMemory() async throws {
        let f = try BundleFixture()
        let small = 4_000
        let total = 24_000
        var generator = SystemRandomNumberGenerator()
        let t0 = BundleFixture.t0
        for start in stride(from: 0, to: total, by: 2_000) {
            var records: [DecodedRecord] = []
            records.reserveCapacity(2_000)
            for i in start..<(start + 2_000) {
                let noise = (0..<160).map { _ in String(generator.next() as UInt64, radix: 16) }.joined()
                records.append(
                    BundleFixture.event(
                        "EnrollmentCall", at: t0 + Int64(i) * 100, device: i < small ? "SMALL" : "BIG",
                        identity: "user\(i % 50)@contoso.com", detail: "policyCheckIn",
                        data: "\"operation\":\"policyCheckIn\",\"noise\":\"\(noise)\"", statusCode: 101, succeeded: true,
                        duration: 50))
            }
            _ = try await f.store.append(records, kind: .event, env: .prod, receivedAt: t0, incident: nil)
        }
        let window = (t0, t0 + Int64(total) * 100)
        func measure(_ request: BundleRequest) async throws -> (growthMiB: Double, report: BundleReport, sink: CountingSink) {
            let builder = f.builder
            let prepared = try await builder.prepare(request, now: t0)
            let canReset = ProcessMemory.resetPeak()
            let before = canReset ? ProcessMemory.field("VmRSS") : ProcessMemory.field("VmHWM")
            var sink = CountingSink()
            let report = try await builder.write(prepared, to: &sink)
            let growth = Double(ProcessMemory.field("VmHWM") - before) / 1024
            let ndjson = report.files.first { $0.name == "telemetry.ndjson" }!.size
            print(
                "bundle: \(report.counts[.event] ?? 0) records, telemetry.ndjson \(ndjson >> 20) MiB, archive \(sink.bytes >> 20) MiB in \(sink.writes) writes (largest \(sink.largestWrite) B); peak RSS growth \(growth) MiB (peak reset: \(canReset))"
            )
            return (growth, report, sink)
        }
        let first = try await measure(BundleRequest(device: "SMALL", since: window.0, until: window.1))
        let large = try await measure(BundleRequest(app: "com.contoso.mail", since: window.0, until: window.1))
        #expect(first.report.counts[.event] == small)
        #expect(large.report.counts[.event] == total)
        #expect(large.report.files.first { $0.name == "telemetry.ndjson" }!.size > 60 << 20)
        #expect(large.sink.bytes > 30 << 20)
        #expect(large.sink.largestWrite < 1 << 20)
        // Only a page of records, a 64 KiB spool buffer, the capped timeline and libarchive's
        // buffers are ever held, whatever the bundle size.
        #expect(large.growthMiB < first.growthMiB + 16, "peak RSS grew \(large.growthMiB) MiB vs \(first.growthMiB) MiB")
        #expect(large.growthMiB < 56)
        await f.close()
    }
}
