import Bundles
import ControlState
import Privacy

extension RecordVisibility {
    /// What the holder of `principal` may see: the one place a token becomes a visibility,
    /// used by queries, follow streams, incident views and bundles alike. Raw data needs the
    /// `pii` scope (or `admin`, which implies it).
    init(principal: Token?, pseudonymizer: Pseudonymizer) {
        self.init(piiAllowed: principal?.allows(.pii) ?? false, pseudonymizer: pseudonymizer)
    }
}
