import StoreCore

/// Where a retention class lives in the SQLite engine's `batch` table.
extension RetentionClass {
    /// The `batch` rows of this class. `kind` 0 is events, 1 logs; the low four bits of
    /// `levelMask` are the levels a batch holds (bit 0 verbose), so `1` is verbose-only.
    var condition: String {
        switch self {
        case .verboseLogs: "kind = 1 AND (levelMask & 15) = 1"
        case .logs: "kind = 1 AND (levelMask & 15) <> 1"
        case .events: "kind = 0"
        }
    }
}
