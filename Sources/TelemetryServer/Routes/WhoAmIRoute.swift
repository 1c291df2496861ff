import ControlState
import Hummingbird

/// `GET /v1/whoami`: the calling token's name, id and scopes (never its secret), so a
/// client such as the support console can show only what the token allows instead of
/// learning it from refusals.
struct WhoAmIRoute: Sendable {
    struct Answer: Encodable {
        var id: String
        var name: String
        /// The scopes the token was created with.
        var scopes: [String]
        /// What it may do: `admin` implies every scope.
        var effectiveScopes: [String]
        /// The app ids the token is bound to, for ingest and reading alike (empty: every app).
        var apps: [String]
    }

    /// `read`, like the other reads: the console it serves is a read tool, and a token that
    /// cannot read has nothing to see there.
    func register(on api: APIRoutes) {
        api.requiring(.read, apps: .none).get("/v1/whoami") { _, context in
            guard let token = context.principal else {
                throw APIError(.unauthorized, code: "unauthenticated", message: "send Authorization: Bearer <token>")
            }
            return try Response.json(
                Answer(
                    id: token.id, name: token.name, scopes: token.scopes.map(\.rawValue).sorted(),
                    effectiveScopes: Scope.allCases.filter(token.allows).map(\.rawValue), apps: token.apps))
        }
    }
}
