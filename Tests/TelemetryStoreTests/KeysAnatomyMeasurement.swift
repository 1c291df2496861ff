import Compression
import Foundation
import StoreCore
import TestSupport
import Testing

@testable import TelemetryStore

/// Where a grouped segment's keys bytes go, part by part and column by column, over keys
/// blobs dumped from a real store (`KEYS_ANATOMY_DIR`: one file per segment row, as
/// `scripts/keys-anatomy.py` writes them). A measurement, not a check: without the variable
/// it does nothing. Each column's share is the size of its bytes deflated alone (level 6),
/// scaled so the columns add up to the stored columns streams.
@Suite struct KeysAnatomyMeasurement {
    @Test func keysBytesByPartAndColumn() throws {
        guard let dir = ProcessInfo.processInfo.environment["KEYS_ANATOMY_DIR"] else { return }
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".keys") }
        var parts: [String: Int] = [:]
        var columns: [String: Int] = [:]
        var records = 0
        for file in files {
            let blob = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir).appendingPathComponent(file)))
            guard blob.first == GroupedSegment.marker else { continue }
            let layout = try GroupedSegment.layout(blob)
            parts["guid table", default: 0] += layout.guidTable.count
            let mapBytes = layout.groups.reduce(0) { $0 + $1.map.count }
            let columnBytes = layout.groups.reduce(0) { $0 + $1.columns.count }
            parts["guid maps", default: 0] += mapBytes
            parts["columns (deflated)", default: 0] += columnBytes
            parts["heads", default: 0] += blob.count - layout.guidTable.count - mapBytes - columnBytes
            for group in layout.groups {
                records += group.count
                let raw = try Inflate.decompress(
                    Array(blob[group.columns]), format: .zlib, dictionary: SegmentDictionary.keys)
                let sections = try Self.sections(raw)
                var alone: [(String, Int)] = []
                for (name, range) in sections {
                    alone.append((name, try Deflate.compress(Array(raw[range]), level: 6).count))
                }
                let sum = alone.reduce(0) { $0 + $1.1 }
                for (name, n) in alone { columns[name, default: 0] += n * group.columns.count / max(sum, 1) }
                parts["columns (inflated)", default: 0] += raw.count
            }
        }
        let total = parts.filter { $0.key != "columns (inflated)" }.reduce(0) { $0 + $1.value }
        print("keys anatomy: \(files.count) rows, \(records) records, \(total) keys bytes, \(Self.perRecord(total, records)) B/record")
        for (name, n) in parts.sorted(by: { $0.value > $1.value }) {
            print("  part \(name): \(n) bytes, \(Self.perRecord(n, records)) B/record")
        }
        for (name, n) in columns.sorted(by: { $0.value > $1.value }) {
            print("  column \(name): \(n) bytes, \(Self.perRecord(n, records)) B/record")
        }
    }

    static func perRecord(_ n: Int, _ records: Int) -> String {
        String(format: "%.2f", Double(n) / Double(max(records, 1)))
    }

    /// The byte ranges of the inflated columns, in ``Segment/encodeColumns`` order.
    static func sections(_ bytes: [UInt8]) throws -> [(String, Range<Int>)] {
        var r = ByteReader(bytes)
        var out: [(String, Range<Int>)] = []
        var start = 0
        func close(_ name: String) {
            out.append((name, start..<r.offset))
            start = r.offset
        }
        let count = Int(try r.varint())
        for _ in 0..<count { _ = try r.varint() }
        close("ids")
        for _ in 0..<count { _ = try r.varint() }
        close("receivedAt")
        for _ in 0..<count { _ = try r.varint() }
        close("time")
        for field in ["appId", "deviceId", "sessionId", "identity", "name", "detail", "incident"] {
            let values = try r.varint()
            for _ in 0..<values { r.offset += Int(try r.varint()) }
            close(field + " values")
            for _ in 0..<count { _ = try r.varint() }
            close(field + " codes")
        }
        for _ in 0..<count { _ = try r.varint() }
        close("statusCode")
        for _ in 0..<count {
            switch try r.byte() {
            case 1: _ = try r.varint()
            case 2: _ = try r.int64()
            default: break
            }
        }
        close("durationMs")
        for _ in 0..<count { _ = try r.byte() }
        close("succeeded")
        for _ in 0..<count { _ = try r.byte() }
        close("level")
        return out
    }
}
