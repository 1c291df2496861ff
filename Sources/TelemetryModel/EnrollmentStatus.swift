/// The SDK's `IntuneMAMEnrollmentStatus` codes. Queries, stats and bundles
/// show the symbolic name beside the number; codes we do not know stay plain numbers.
public enum EnrollmentStatus {
    /// Names by code, derived from the one table of explanations (`EnrollmentStatus.all`).
    public static let names: [Int: String] = Dictionary(uniqueKeysWithValues: all.map { ($0.code, $0.name) })

    /// The explanation of every documented code, by code.
    public static let byCode: [Int: EnrollmentStatusExplanation] = Dictionary(uniqueKeysWithValues: all.map { ($0.code, $0) })

    /// The symbolic name of a code, or nil for a code the SDK documentation does not list.
    public static func name(of code: Int) -> String? { names[code] }

    /// What a documented code means and what support does next; nil for an unknown code.
    public static func explanation(of code: Int) -> EnrollmentStatusExplanation? { byCode[code] }

    /// "AccountNotLicensed (200)", or "999" for an unknown code: the form people read.
    public static func label(of code: Int) -> String {
        if let name = names[code] { return "\(name) (\(code))" }
        return String(code)
    }

    /// 1xx codes are successes, 2xx failures (the SDK's own split).
    public static func isSuccess(_ code: Int) -> Bool { (100..<200).contains(code) }
}

/// One enrollment status code explained for a support engineer: what the SDK's answer
/// means in one line, and the next step that resolves it (or that none is needed).
public struct EnrollmentStatusExplanation: Sendable, Hashable, Codable {
    public var code: Int
    public var name: String
    public var succeeded: Bool
    /// One line: what the SDK reported.
    public var meaning: String
    /// One line: what support does about it.
    public var nextStep: String

    public init(code: Int, name: String, meaning: String, nextStep: String) {
        self.code = code
        self.name = name
        self.succeeded = EnrollmentStatus.isSuccess(code)
        self.meaning = meaning
        self.nextStep = nextStep
    }
}
