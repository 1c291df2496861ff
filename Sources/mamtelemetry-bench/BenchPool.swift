import AsyncHTTPClient
import Foundation
import NIOCore
import Synchronization

struct BenchBody: Sendable {
    let path: String
    let wire: ByteBuffer
    let records: Int
    let rawBytes: Int
    var contentType = "application/x-ndjson"
    var isOTLP: Bool { contentType == BenchLogsProtocol.otlpContentType }
}

/// The pre-generated request bodies, compressed once before the clock starts.
struct BenchPool: Sendable {
    let bodies: [BenchBody]
    let records: Int

    static func make(
        records: Int, batchSize: Int, logsFraction: Double, logsProtocol: BenchLogsProtocol = .native, encoding: BenchEncoding,
        nonce: UInt64, ppe: Double, disabled: Double, times: BenchTimes = .lastTenMinutes, dataSet: BenchDataSet = .guid
    ) -> BenchPool {
        let count = max(1, (records + batchSize - 1) / batchSize)
        // Build in parallel (before timing) so large pools are ready in seconds. Each slot holds
        // `batchSize` records: one request, or for the fleet's direct sends several small ones.
        let slots = Mutex([[BenchBody]](repeating: [], count: count))
        DispatchQueue.concurrentPerform(iterations: count) { b in
            var gen = BenchData(seed: nonce &+ UInt64(b) &* 0x9E37_79B9, nonce: nonce, ppe: ppe, disabled: disabled, times: times)
            let isLog = Double(b % 100) < logsFraction * 100
            let otlp = isLog && logsProtocol == .otlp
            var requests: [(body: [UInt8], records: Int)]
            if otlp {
                requests = [(gen.otlpLogs(count: batchSize), batchSize)]
            } else if dataSet == .fleet {
                requests = gen.fleetRequests(count: batchSize, logs: isLog, idBase: UInt64(b) << 20)
            } else {
                var raw: [UInt8] = []
                raw.reserveCapacity(batchSize * 420)
                gen.records(of: dataSet, logs: isLog, count: batchSize, idBase: UInt64(b) << 20, into: &raw)
                requests = [(raw, batchSize)]
            }
            let bodies = requests.map { raw, records in
                BenchBody(
                    path: isLog ? "/v1/logs" : "/v1/telemetry", wire: ByteBuffer(bytes: encoding.encoded(raw)), records: records,
                    rawBytes: raw.count,
                    contentType: otlp ? BenchLogsProtocol.otlpContentType : "application/x-ndjson")
            }
            slots.withLock { $0[b] = bodies }
        }
        let bodies = slots.withLock { $0.flatMap { $0 } }
        // Interleave logs among telemetry rather than in one block.
        return BenchPool(bodies: bodies, records: count * batchSize)
    }

    /// Reads `"accepted":N` from the ack without a full JSON parse.
    static func acceptedCount(_ answer: ByteBuffer) -> Int {
        let bytes = answer.readableBytesView
        let key = Array("\"accepted\":".utf8)
        guard let r = bytes.firstRange(of: key) else { return 0 }
        var n = 0
        for c in bytes[r.upperBound...] {
            guard c >= 0x30 && c <= 0x39 else { break }
            n = n * 10 + Int(c - 0x30)
        }
        return n
    }
}

/// Realistic MAM SDK telemetry: three event kinds, a skewed status-code mix, a fleet of
/// devices and a few apps, plus verbose/info diagnostic logs. Deterministic per seed.
