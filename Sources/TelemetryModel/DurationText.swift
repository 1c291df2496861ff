/// A stored duration as people read it (timelines, the CLI's tables).
public enum DurationText {
    /// Whole milliseconds (`812`); a value ingest no longer accepts but an older version may
    /// have stored (`1e19`, infinity, NaN) prints as the number it is, never traps.
    public static func milliseconds(_ ms: Double) -> String {
        guard let whole = Int64(exactly: ms.rounded()) else { return "\(ms)" }
        return String(whole)
    }
}
