import TelemetryModel

/// The per-record index keys of one batch, stored beside the compressed payload so queries
/// and stats can filter and aggregate without inflating and parsing every JSON record.
enum KeysBlock {
    static let version: UInt8 = 1

    static func encode(_ keys: [RecordKeys]) -> [UInt8] {
        var w = ByteWriter()
        w.bytes.reserveCapacity(keys.count * 96)
        w.bytes.append(version)
        w.varint(UInt64(keys.count))
        for k in keys {
            w.int64(k.time)
            w.string(k.appId)
            w.string(k.deviceId)
            w.string(k.sessionId)
            w.string(k.identity)
            w.string(k.name)
            w.string(k.detail)
            w.string(k.incident)
            // 0 = absent, else zig-zag code + 1.
            if let code = k.statusCode {
                let z = (UInt64(bitPattern: Int64(code)) << 1) ^ UInt64(bitPattern: Int64(code) >> 63)
                w.varint(z + 1)
            } else {
                w.varint(0)
            }
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

    static func decode(_ bytes: [UInt8]) throws -> [RecordKeys] {
        var r = ByteReader(bytes)
        guard try r.byte() == version else { throw StoreError.corruptBlock("unknown keys block version") }
        let count = Int(try r.varint())
        var out: [RecordKeys] = []
        out.reserveCapacity(count)
        for _ in 0..<count {
            let time = try r.int64()
            var k = RecordKeys(
                time: time, appId: try r.string(), deviceId: try r.string(), sessionId: try r.string(),
                identity: try r.string(), name: try r.string(), detail: try r.string())
            k.incident = try r.string()
            let z = try r.varint()
            if z > 0 {
                let u = z - 1
                k.statusCode = Int(Int64(bitPattern: (u >> 1) ^ (0 &- (u & 1))))
            }
            if try r.byte() == 1 { k.durationMs = Double(bitPattern: UInt64(bitPattern: try r.int64())) }
            switch try r.byte() {
            case 1: k.succeeded = false
            case 2: k.succeeded = true
            default: break
            }
            let level = try r.byte()
            if level > 0 { k.level = LogLevel(rawValue: Int(level) - 1) }
            out.append(k)
        }
        return out
    }
}
