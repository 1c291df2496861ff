/// The values a domain metric's label may take: the SDK's documented names and nothing
/// else. A client string outside it (a new management type, a typo, an e-mail address an app
/// put in `operation`) is counted under `other`, so `/metrics`, which may be open to anyone
/// (`auth.metricsRequireToken: false`), never shows what a client wrote and its series stay
/// bounded. An empty value is `unknown`.
struct LabelVocabulary: Sendable {
    static let other = "other"
    static let unknown = "unknown"
    let known: Set<String>

    init(_ known: [String]) { self.known = Set(known) }

    /// The label value for `value`.
    func label(_ value: String) -> String {
        if value.isEmpty { return Self.unknown }
        return known.contains(value) ? value : Self.other
    }

    /// `AppLaunch` management types.
    static let managementTypes = LabelVocabulary(["MDM", "MAM-WE", "Unmanaged"])
    /// `EnrollmentCall` operations.
    static let operations = LabelVocabulary(["enroll", "policyCheckIn", "unenroll"])
    /// `IntuneAction` actions.
    static let actions = LabelVocabulary([
        "SelectiveWipe", "IdentitySwitch", "AppRestart", "SaveAsBlocked", "OpenFromBlocked", "PinPrompt", "ConditionalLaunch",
    ])
}
