import TelemetryModel

/// What decoding an OTLP export request will cost in memory, counted before it is decoded.
/// The decoded form is far larger than the wire: an empty `AnyValue` in an array is 2 bytes
/// on the wire and a heap-allocated message once decoded (a 14 MB body of 9,000 records with
/// 780 empty array values each took the daemon from 36 to 520 MB). So a walk over the body,
/// which allocates nothing, meets every value the decoder would make (each field of every
/// message: attributes, array elements, nested lists, records) and charges each one
/// `bytesPerValue` plus the bytes of its text, as it meets them, to `charge`, the request's
/// in-flight budget; past `DecodeLimits.maxValuesPerRequest` values the request is refused
/// before anything is decoded.
///
/// A body the walk cannot follow (not protobuf, not JSON) is left to the decoder, which
/// refuses it with its own message; what the walk counted until then is still charged.
public struct OTLPDecodeCost {
    /// The memory one decoded value takes: a message's storage or a field's slot, its
    /// share of the array holding it, and its line in the native record it is mapped to.
    public static let bytesPerValue = 64
    /// Cost gathered before it is charged, so the budget's lock is taken once per chunk.
    static let chargeChunk = 1 << 20

    let limits: DecodeLimits
    let charge: (Int) throws -> Void
    private(set) var values = 0
    private var pending = 0

    public init(limits: DecodeLimits, charge: @escaping (Int) throws -> Void) {
        self.limits = limits
        self.charge = charge
    }

    /// Counts and charges the values of `body`; refuses past the per-request cap. Returns
    /// how many values it met.
    @discardableResult
    public static func charge(
        _ body: [UInt8], encoding: OTLPEncoding, limits: DecodeLimits, to charge: @escaping (Int) throws -> Void
    ) throws -> Int {
        var cost = OTLPDecodeCost(limits: limits, charge: charge)
        try body.withUnsafeBufferPointer { bytes in
            switch encoding {
            case .protobuf: try cost.walkProtobuf(bytes)
            case .json: try JSONValueWalk.walk(bytes, maxDepth: OTLPLogsDecoder.messageDepth(limits)) { try cost.met(textBytes: $0) }
            }
        }
        try cost.flush()
        return cost.values
    }

    /// One value met, holding `textBytes` bytes of string or bytes content.
    mutating func met(textBytes: Int) throws {
        values += 1
        guard values <= limits.maxValuesPerRequest else {
            throw RequestLimitError.tooManyValues(limit: limits.maxValuesPerRequest)
        }
        pending += Self.bytesPerValue + textBytes
        if pending >= Self.chargeChunk { try flush() }
    }

    mutating func flush() throws {
        guard pending > 0 else { return }
        let amount = pending
        pending = 0
        try charge(amount)
    }
}

extension OTLPDecodeCost {
    /// The messages of an export request, and which of their fields hold which message.
    enum Message: CaseIterable {
        case request, resourceLogs, resource, scopeLogs, scope, logRecord, keyValue, anyValue, arrayValue, keyValueList

        /// The message a length-delimited field holds; nil for text, bytes and packed scalars.
        func child(_ field: UInt64) -> Message? {
            switch (self, field) {
            case (.request, 1): .resourceLogs
            case (.resourceLogs, 1): .resource
            case (.resourceLogs, 2): .scopeLogs
            case (.resource, 1): .keyValue
            case (.scopeLogs, 1): .scope
            case (.scopeLogs, 2): .logRecord
            case (.scope, 3): .keyValue
            case (.logRecord, 5): .anyValue
            case (.logRecord, 6): .keyValue
            case (.keyValue, 2): .anyValue
            case (.anyValue, 5): .arrayValue
            case (.anyValue, 6): .keyValueList
            case (.arrayValue, 1): .anyValue
            case (.keyValueList, 1): .keyValue
            default: nil
            }
        }
    }

    /// Walks the protobuf wire format with an explicit stack (no recursion on client
    /// nesting), counting every field of every known message; stops at the first byte it
    /// cannot read, at the decoder's depth limit, or at the end.
    mutating func walkProtobuf(_ b: UnsafeBufferPointer<UInt8>) throws {
        var stack: [(message: Message, end: Int)] = [(.request, b.count)]
        let maxDepth = OTLPLogsDecoder.messageDepth(limits)
        var i = 0
        func varint() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while i < b.count, shift < 64 {
                let byte = b[i]
                i += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            return nil
        }
        while let top = stack.last {
            if i >= top.end {
                guard i == top.end else { return }
                stack.removeLast()
                continue
            }
            guard let key = varint() else { return }
            let field = key >> 3
            switch key & 7 {
            case 0:
                guard varint() != nil else { return }
                try met(textBytes: 0)
            case 1, 5:
                i += key & 7 == 1 ? 8 : 4
                guard i <= top.end else { return }
                try met(textBytes: 0)
            case 2:
                // The length's varint may run past the enclosing message: nothing to read then.
                guard let length = varint(), i <= top.end, length <= UInt64(top.end - i) else { return }
                let end = i + Int(length)
                if let child = top.message.child(field) {
                    guard stack.count < maxDepth else { return }
                    try met(textBytes: 0)
                    stack.append((child, end))
                } else {
                    try met(textBytes: Int(length))
                    i = end
                }
            default:
                return
            }
        }
    }
}
