/// One difference between a record's bytes and its canonical form: the bytes in `range` are
/// replaced by `replacement` (empty: removed, as whitespace outside strings is).
struct JSONEdit: Sendable, Hashable {
    var range: Range<Int>
    var replacement: [UInt8]

    /// `bytes` with `edits` (in input order, not overlapping) applied: the unchanged runs are
    /// copied in bulk, so a record with a few edits costs a few copies.
    static func apply(_ edits: [JSONEdit], to b: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var kept = 0
        for edit in edits {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: b[kept..<edit.range.lowerBound]))
            out.append(contentsOf: edit.replacement)
            kept = edit.range.upperBound
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: b[kept..<b.count]))
        return out
    }
}
