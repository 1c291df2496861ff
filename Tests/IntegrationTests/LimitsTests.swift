import Foundation
import TestSupport
import Testing

/// A 1 GB-of-zeros deflate bomb is refused early with the daemon process's memory bounded
/// (its peak RSS is read from /proc, so this needs a process; the other input limits are
/// checked in process: TelemetryServerTests.IngestLimitsRouteTests).
@Suite(.serialized) struct LimitsTests {
    static func small(_ id: String, data: String = #"{"statusCode":100}"#) -> String {
        #"{"name":"LimitProbe","appId":"com.contoso.limits","eventId":"\#(id)","data":\#(data)}"#
    }

    static func message(_ body: [UInt8]) -> String {
        ((parseJSON(body)["error"] as? [String: Any])?["message"] as? String) ?? String(decoding: body.prefix(2000), as: UTF8.self)
    }

    @Test func gigabyteDeflateBombIsRefusedQuicklyWithMemoryBounded() async throws {
        let d = try DaemonProcess()
        try await d.start()
        defer { d.cleanUp() }
        // 1 GiB of zeros, zlib level 9, streamed by Python so the test never holds the gigabyte.
        let bombFile = d.dataDirectory.appendingPathComponent("bomb.zz")
        let py = Process()
        py.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        py.arguments = [
            "python3", "-c",
            "import zlib,sys\nc=zlib.compressobj(9)\nz=bytes(1<<20)\nf=open(sys.argv[1],'wb')\nfor _ in range(1024): f.write(c.compress(z))\nf.write(c.flush())\nf.close()",
            bombFile.path,
        ]
        try py.run()
        py.waitUntilExit()
        #expect(py.terminationStatus == 0)
        let bomb = try [UInt8](Data(contentsOf: bombFile))
        #expect(bomb.count > 500_000 && bomb.count < 2_000_000, "bomb is \(bomb.count) bytes")
        let started = ContinuousClock.now
        let (s, b, _) = try await d.post("/v1/telemetry", body: bomb, headers: [("Content-Encoding", "deflate")])
        let took = ContinuousClock.now - started
        #expect(s == 413, "\(s) \(Self.message(b))")
        let message = Self.message(b)
        #expect(message.contains("maxCompressionRatio=200") || message.contains("maxDecompressedBytes="), "\(message)")
        #expect(took < .seconds(5), "refusal took \(took)")
        let hwm = try #require(Self.peakRSSKiB(pid: d.process!.processIdentifier))
        #expect(hwm < 200 * 1024, "daemon VmHWM \(hwm) KiB")
        print("deflate bomb: \(bomb.count) bytes on the wire, HTTP \(s) in \(took), daemon VmHWM \(hwm) KiB: \(message)")
        // Still serving afterwards.
        let (ok, _, _) = try await d.post("/v1/telemetry", body: Array(Self.small("after-bomb").utf8))
        #expect(ok == 200)
    }

    /// VmHWM (peak resident set) of a process, in KiB.
    static func peakRSSKiB(pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }
}
