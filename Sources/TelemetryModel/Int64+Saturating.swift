/// Arithmetic on times and counts that come from clients or from storage: it never traps,
/// whatever value an older version stored or a query parameter named.
extension Int64 {
    /// `self + other`, or `Int64.max` / `Int64.min` when the sum does not fit.
    public func saturatingAdding(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self - other`, or `Int64.max` / `Int64.min` when the difference does not fit.
    public func saturatingSubtracting(_ other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other > 0 ? .min : .max) : difference
    }

    /// The start of the `width`-long bucket (width > 0) holding `self`, buckets aligned to
    /// multiples of `width` since the epoch, also before it; near `Int64.min`, where that start
    /// is not representable, the first multiple above it.
    public func flooredToMultiple(of width: Int64) -> Int64 {
        let remainder = self % width
        guard remainder < 0 else { return self - remainder }
        let (floor, overflow) = subtractingReportingOverflow(remainder + width)
        return overflow ? self - remainder : floor
    }
}
