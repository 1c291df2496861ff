/// A point in time as a query parameter: RFC 3339, epoch milliseconds, `now`, or relative to
/// now like `-15m`, `-2h`, `-7d` (the forms `journalctl --since` users reach for).
public enum TimeExpression {
    /// A time outside ``Timestamp/acceptedRange`` is moved to its edge: no record lies
    /// beyond it, and every window computed from the result stays far from `Int64`'s ends.
    public static func parse(_ text: String, now: Int64) -> Int64? {
        unclamped(text, now: now).map { min(max($0, Timestamp.acceptedRange.lowerBound), Timestamp.acceptedRange.upperBound) }
    }

    static func unclamped(_ text: String, now: Int64) -> Int64? {
        let t = text.trimmingCharactersInSetWhitespace()
        if t == "now" { return now }
        if let first = t.first, first == "-" || first == "+" {
            guard let offset = duration(t.dropFirst()) else { return nil }
            // Refuse what does not fit rather than trap: `-99999999999999999d` is a typo.
            let (value, overflow) = first == "-" ? now.subtractingReportingOverflow(offset) : now.addingReportingOverflow(offset)
            return overflow ? nil : value
        }
        if let ms = Int64(t) { return ms }
        return Timestamp.parse(t)
    }

    /// A duration like `15m`, `2h`, `7d`, `1w` (or `30s`) in milliseconds; nil when malformed
    /// or too large to represent.
    public static func duration<S: StringProtocol>(_ text: S) -> Int64? {
        guard text.count >= 2, let unit = text.last, let amount = Int64(text.dropLast()), amount >= 0 else { return nil }
        let scale: Int64
        switch unit {
        case "s": scale = 1000
        case "m": scale = 60_000
        case "h": scale = 3_600_000
        case "d": scale = 86_400_000
        case "w": scale = 7 * 86_400_000
        default: return nil
        }
        let (ms, overflow) = amount.multipliedReportingOverflow(by: scale)
        return overflow ? nil : ms
    }
}

extension String {
    func trimmingCharactersInSetWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return String(s)
    }
}
