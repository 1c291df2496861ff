/// The `contains` filter of a query, one rule for both backends: each applies it to a
/// record's stored JSON bytes without decoding them.
extension UnsafeBufferPointer where Element == UInt8 {
    /// ASCII case-insensitive substring test; `needle` must already be lower-case.
    public func containsCaseInsensitive(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard count >= needle.count else { return false }
        let first = needle[0]
        var i = 0
        let last = count - needle.count
        while i <= last {
            if Self.lower(self[i]) == first {
                var j = 1
                while j < needle.count, Self.lower(self[i + j]) == needle[j] { j += 1 }
                if j == needle.count { return true }
            }
            i += 1
        }
        return false
    }

    @inline(__always) static func lower(_ c: UInt8) -> UInt8 { c >= 65 && c <= 90 ? c + 32 : c }
}
