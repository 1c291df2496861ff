/// An integer's decimal digits appended to a byte buffer without a `String` in between: the
/// writers of query answers and insert bodies put one or more on every record.
public enum DecimalText {
    @inlinable public static func append(_ value: Int64, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes hold the 19 digits, written backwards
        var count = 0
        withUnsafeMutableBytes(of: &digits) { d in
            repeat {
                d[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: d[(24 - count)...]))
        }
    }
}
