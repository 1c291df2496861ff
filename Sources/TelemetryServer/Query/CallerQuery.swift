import Foundation
import HTTPTypes
import Privacy

/// A request's query parameters as its caller may use them: the one place they are read.
/// The route group's `AccessMiddleware` builds it once the caller is known, before any
/// handler runs, and handlers take their parameters from it (`context.query`), so every
/// rule here holds on every route however the request is spelled:
///
/// - Names and values are percent-decoded once (`%69dentity` is `identity`).
/// - A parameter of the API given twice is refused: no reader may take the first where
///   another takes the last. Names the API does not know are ignored (a collector client
///   may add its own).
/// - A name the API knows only in another spelling (`Identity`, ` identity`) is refused
///   rather than ignored, so a filter the caller meant is never silently dropped.
/// - `identity` is trimmed. A pseudonym (`user-…`, any case) filters by the identity it
///   stands for. A caller without `pii` may give nothing else: answering a query by UPN
///   with pseudonymised records would tell it the UPN's pseudonym, which only `pii` may ask
///   (`GET /v1/pseudonyms`). With `pii`, anything else is an identity (UPN).
struct CallerQuery: Sendable {
    /// What `identity=` filters by.
    enum Identity: Sendable, Hashable {
        /// An identity as sent (lower-cased): only a `pii` caller may give one.
        case identity(String)
        /// A `user-…` pseudonym (lower-cased).
        case pseudonym(String)
    }

    private let values: [String: String]
    let identity: Identity?

    /// No parameters (a request the access check did not run for).
    static let none = CallerQuery(values: [:], identity: nil)

    /// Every parameter name a route of the API takes.
    static let vocabulary: Set<String> = [
        "env", "app", "device", "session", "identity", "name", "statusCode", "level", "incident", "since", "until", "contains",
        "order", "limit", "cursor", "follow", "interval", "source", "format", "around", "span", "expand", "tail", "match",
    ]

    private init(values: [String: String], identity: Identity?) {
        self.values = values
        self.identity = identity
    }

    /// Reads the raw query string (`a=1&b=2`) for a caller who may (`piiAllowed`) or may not
    /// see personal data; refuses what the rules above forbid.
    init(query: String?, piiAllowed: Bool) throws(APIError) {
        var values: [String: String] = [:]
        var counts: [String: Int] = [:]
        for pair in (query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = String(parts[0]).removingPercentEncoding, Self.vocabulary.contains(name) else {
                let name = String(parts[0]).removingPercentEncoding ?? ""
                let folded = name.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
                if let meant = Self.vocabulary.first(where: { $0.lowercased() == folded }) {
                    throw APIError.badRequest(
                        "invalid_parameter", "parameter '\(name)' is unknown; parameter names are case-sensitive: did you mean '\(meant)'?")
                }
                continue
            }
            guard let value = String(parts.count > 1 ? parts[1] : "").removingPercentEncoding else {
                throw APIError.badRequest("invalid_parameter", "parameter '\(name)' is not valid percent-encoding")
            }
            counts[name, default: 0] += 1
            if counts[name]! > 1 {
                throw APIError.badRequest("invalid_parameter", "parameter '\(name)' is given more than once; give it once")
            }
            values[name] = value
        }
        self.values = values
        identity = try Self.identity(values["identity"], piiAllowed: piiAllowed)
    }

    private static func identity(_ raw: String?, piiAllowed: Bool) throws(APIError) -> Identity? {
        let text = (raw ?? "").trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
        if text.isEmpty { return nil }
        if Pseudonymizer.isIdentityPseudonym(text) { return .pseudonym(text) }
        if piiAllowed { return .identity(text) }
        throw APIError(
            .forbidden, code: "insufficient_scope",
            message:
                "parameter 'identity' takes a user pseudonym (user-…, as this token is shown identities); a UPN needs the 'pii' scope: "
                + "ask someone who holds it for the pseudonym (GET /v1/pseudonyms?identity=<upn>, mamtelemetryctl pseudonym <upn>)")
    }

    /// The parameter's value, or nil when it is absent or empty.
    func value(_ name: String) -> String? {
        guard let v = values[name], !v.isEmpty else { return nil }
        return v
    }
}
