import Synchronization

/// Keeps a label's value set bounded: the first `limit` distinct values pass through, later
/// new ones become `other`. For the app ids of dropped records (`DropCounter`), which would
/// otherwise let one misbehaving relay create unbounded Prometheus series; labels from a
/// known vocabulary use `LabelVocabulary` instead.
final class LabelCap: Sendable {
    static let overflow = "other"
    let limit: Int
    private let seen = Mutex<Set<String>>([])

    init(limit: Int = 32, preset: [String] = []) {
        self.limit = limit
        seen.withLock { $0.formUnion(preset.prefix(limit)) }
    }

    /// The label value to use for `value` (empty becomes `unknown`).
    func label(_ value: String) -> String {
        let v = value.isEmpty ? "unknown" : value
        return seen.withLock { set in
            if set.contains(v) { return v }
            guard set.count < limit else { return Self.overflow }
            set.insert(v)
            return v
        }
    }
}
