/// Visits every value of a JSON document with the record scanner's tokenizer (the one JSON
/// grammar of the daemon), allocating nothing per value: how the cost of decoding a body
/// into objects is known before it is decoded (`OTLPDecodeCost`). `visit` is told each
/// object, array, string, number and literal, with the bytes it spans when it is text (a
/// member name counts as text of its object's member).
public enum JSONValueWalk {
    /// Stops quietly at the first byte that is not JSON or past `maxDepth`: the decoder that
    /// reads the body next refuses it with its own message. Errors `visit` throws propagate.
    public static func walk(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, _ visit: (Int) throws -> Void) throws {
        var limits = DecodeLimits.walkOnly
        limits.maxDepth = maxDepth
        var cursor = JSONRecordScanner.Cursor(b: bytes, limits: limits)
        do {
            try value(&cursor, visit)
        } catch is ShapeError {
            return
        }
    }

    private static func value(_ cursor: inout JSONRecordScanner.Cursor, _ visit: (Int) throws -> Void) throws {
        cursor.skipSpace()
        switch cursor.peek {
        case UInt8(ascii: "{"):
            try visit(0)
            try cursor.object { key, inner in
                try visit(key.utf8.count)
                try value(&inner, visit)
            }
        case UInt8(ascii: "["):
            try visit(0)
            try cursor.array { inner in try value(&inner, visit) }
        default:
            let start = cursor.i
            _ = try cursor.value(capture: false)
            try visit(cursor.i - start)
        }
    }
}
