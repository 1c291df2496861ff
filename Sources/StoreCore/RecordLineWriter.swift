public import TelemetryModel

/// Writes records as the query API and bundles show them: the client's JSON with the
/// server's fields put in front — `id`, `receivedAt`, `env`, and for enrollment results the
/// status code's name — without re-encoding what the client sent. Every record is appended
/// to one growing buffer (one bulk copy of its bytes), and what repeats is encoded once: a
/// batch's records share their receive time, and status names are few.
public struct RecordLineWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    private var receivedAt: (ms: Int64, json: [UInt8]) = (.min, [])
    private var statusNames: [Int: [UInt8]] = [:]

    public init(capacity: Int = 1 << 16) {
        bytes.reserveCapacity(capacity)
    }

    public mutating func append(_ r: ScannedRecord) {
        append(id: r.id, receivedAt: r.receivedAt, env: r.env, statusCode: r.keys.statusCode, json: r.json)
    }

    public mutating func append(_ r: StoredRecord) {
        r.json.withUnsafeBufferPointer { append(id: r.id, receivedAt: r.receivedAt, env: r.env, statusCode: r.keys.statusCode, json: $0) }
    }

    /// One record; JSON that is not an object is written as stored, without server fields.
    public mutating func append(
        id: Int64, receivedAt ms: Int64, env: TelemetryEnvironment, statusCode: Int?, json: UnsafeBufferPointer<UInt8>
    ) {
        guard json.first == UInt8(ascii: "{") else {
            bytes.append(contentsOf: json)
            return
        }
        bytes.append(contentsOf: #"{"id":"#.utf8)
        DecimalText.append(id, to: &bytes)
        if receivedAt.ms != ms { receivedAt = (ms, JSONWriter.quoted(Timestamp.format(milliseconds: ms))) }
        bytes.append(contentsOf: #","receivedAt":"#.utf8)
        bytes.append(contentsOf: receivedAt.json)
        bytes.append(contentsOf: env == .prod ? #","env":"prod""#.utf8 : #","env":"ppe""#.utf8)
        if let code = statusCode, let name = statusName(code) {
            bytes.append(contentsOf: #","statusName":"#.utf8)
            bytes.append(contentsOf: name)
        }
        // An empty object `{}` needs no comma after the server's members.
        let rest = UnsafeBufferPointer(rebasing: json[1...])
        if let next = rest.first(where: { !Self.isSpace($0) }), next != UInt8(ascii: "}") {
            bytes.append(UInt8(ascii: ","))
        }
        bytes.append(contentsOf: rest)
    }

    /// Raw bytes between records (separators, framing).
    public mutating func append(raw: some Sequence<UInt8>) { bytes.append(contentsOf: raw) }

    /// Hands over what was written and starts an empty buffer of the same capacity.
    public mutating func take() -> [UInt8] {
        defer { bytes.removeAll(keepingCapacity: true) }
        return bytes
    }

    /// Empties the buffer, keeping its capacity.
    public mutating func clear() { bytes.removeAll(keepingCapacity: true) }

    public var count: Int { bytes.count }

    @inline(__always) static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

    private mutating func statusName(_ code: Int) -> [UInt8]? {
        if let hit = statusNames[code] { return hit }
        guard let name = EnrollmentStatus.name(of: code) else { return nil }
        let quoted = JSONWriter.quoted(name)
        statusNames[code] = quoted
        return quoted
    }
}
