import StoreCore
import TelemetryModel

/// The per-record index keys of one batch, stored beside the compressed payload so queries
/// and stats can filter and aggregate without inflating and parsing every JSON record.
enum KeysBlock {
    /// Version 2: a string table (each distinct app, device, session, identity, name,
    /// detail and incident once per batch, records refer to it by index) and time as a
    /// zig-zag delta from the previous record. Identifiers repeat heavily within a batch, so
    /// this stores far less than the payload's own copies, and decoding makes one `String`
    /// per distinct value instead of one per record and field.
    static let version: UInt8 = 2

    static func encode(_ keys: [RecordKeys]) -> [UInt8] {
        var table: [ExactText: Int] = [:]
        var strings: [String] = []
        var refs: [Int] = []
        refs.reserveCapacity(keys.count * 7)
        func ref(_ s: String) {
            let i = table.indexInserting(ExactText(s), next: strings.count)
            if i == strings.count { strings.append(s) }
            refs.append(i)
        }
        for k in keys {
            ref(k.appId)
            ref(k.deviceId)
            ref(k.sessionId)
            ref(k.identity)
            ref(k.name)
            ref(k.detail)
            ref(k.incident)
        }
        var w = ByteWriter()
        w.bytes.reserveCapacity(keys.count * 24 + strings.count * 24)
        w.bytes.append(version)
        w.varint(UInt64(strings.count))
        for s in strings { w.string(s) }
        w.varint(UInt64(keys.count))
        var previous: Int64 = 0
        var r = 0
        for k in keys {
            w.varint(zigzag(k.time &- previous))
            previous = k.time
            for _ in 0..<7 {
                w.varint(UInt64(refs[r]))
                r += 1
            }
            w.varint(statusCodeCode(k.statusCode))
            if let d = k.durationMs {
                w.bytes.append(1)
                w.int64(Int64(bitPattern: d.bitPattern))
            } else {
                w.bytes.append(0)
            }
            w.bytes.append(k.succeeded.map { $0 ? 2 : 1 } ?? 0)
            w.bytes.append(k.level.map { UInt8($0.rawValue) + 1 } ?? 0)
        }
        return w.bytes
    }

    /// Reads a block back; anything `encode` could not have written (another version, a
    /// count or index past the block, a flag byte out of range, bytes left over) throws
    /// ``StoreError/corruptBlock(_:)`` rather than yield keys that would misfile records.
    ///
    /// With `app` (a query or stats scan filtered by app), records of other apps come back
    /// with their time, app, status, duration, success and level but empty strings otherwise:
    /// the caller's app filter drops them first, and a table string is made only when a
    /// record that can match refers to it (a fresh batch holds every app's records, and
    /// making every device's and session's `String` was most of decoding it). The block is
    /// checked as fully either way.
    static func decode(_ bytes: [UInt8], app: String? = nil) throws -> [RecordKeys] {
        var r = ByteReader(bytes)
        guard try r.byte() == version else { throw StoreError.corruptBlock("unknown keys block version") }
        let stringCount = try r.varint()
        guard stringCount <= UInt64(bytes.count) else { throw StoreError.corruptBlock("string table larger than block") }
        // The table as byte ranges; each `String` is made the first time a record needs it.
        var ranges: [Range<Int>] = []
        ranges.reserveCapacity(Int(stringCount))
        for _ in 0..<stringCount {
            let length = try r.varint()
            guard length <= UInt64(bytes.count - r.offset) else { throw StoreError.corruptBlock("string past end") }
            ranges.append(r.offset..<r.offset + Int(length))
            r.offset += Int(length)
        }
        var strings = [String?](repeating: nil, count: ranges.count)
        func reference() throws -> Int {
            let i = try r.varint()
            guard i < UInt64(ranges.count) else { throw StoreError.corruptBlock("string index out of range") }
            return Int(i)
        }
        func string() throws -> String {
            let i = try reference()
            if let made = strings[i] { return made }
            let made = String(decoding: bytes[ranges[i]], as: UTF8.self)
            strings[i] = made
            return made
        }
        let count = try r.varint()
        guard count <= UInt64(bytes.count) else { throw StoreError.corruptBlock("record count larger than block") }
        var out: [RecordKeys] = []
        out.reserveCapacity(Int(count))
        var time: Int64 = 0
        for _ in 0..<count {
            time &+= unzigzag(try r.varint())
            let appId = try string()
            var k: RecordKeys
            if let app, appId != app {
                for _ in 0..<6 { _ = try reference() }
                k = RecordKeys(time: time, appId: appId)
            } else {
                k = RecordKeys(
                    time: time, appId: appId, deviceId: try string(), sessionId: try string(),
                    identity: try string(), name: try string(), detail: try string())
                k.incident = try string()
            }
            k.statusCode = statusCode(ofCode: try r.varint())
            switch try r.byte() {
            case 0: break
            case 1: k.durationMs = Double(bitPattern: UInt64(bitPattern: try r.int64()))
            default: throw StoreError.corruptBlock("duration flag out of range")
            }
            switch try r.byte() {
            case 0: break
            case 1: k.succeeded = false
            case 2: k.succeeded = true
            default: throw StoreError.corruptBlock("success flag out of range")
            }
            let level = try r.byte()
            if level > 0 {
                guard let known = LogLevel(rawValue: Int(level) - 1) else { throw StoreError.corruptBlock("log level out of range") }
                k.level = known
            }
            out.append(k)
        }
        guard r.atEnd else { throw StoreError.corruptBlock("bytes after the last record") }
        return out
    }

    /// A status code as stored: 0 = absent, else its zig-zag code + 1. Ingest keeps codes
    /// within ``InterpretedField/statusCode``; any other `Int` (a caller that built keys
    /// itself) is stored as well, except `Int.min`, whose code + 1 does not fit and which is
    /// stored as `Int.min + 1`, so no value given to the store can trap it.
    @inline(__always) static func statusCodeCode(_ code: Int?) -> UInt64 {
        guard let code else { return 0 }
        return zigzag(max(Int64(code), -Int64.max)) + 1
    }

    /// The status code a stored code stands for (any code, as written by any version).
    @inline(__always) static func statusCode(ofCode z: UInt64) -> Int? {
        z > 0 ? Int(truncatingIfNeeded: unzigzag(z - 1)) : nil
    }

    @inline(__always) static func zigzag(_ v: Int64) -> UInt64 { UInt64(bitPattern: (v << 1) ^ (v >> 63)) }
    @inline(__always) static func unzigzag(_ u: UInt64) -> Int64 { Int64(bitPattern: u >> 1) ^ -Int64(bitPattern: u & 1) }
}
