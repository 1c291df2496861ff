import Bundles
import ControlState
import Hummingbird
import Privacy

/// `GET /v1/pseudonyms?identity=<upn>` (`pii` scope): the `user-…` pseudonym of an identity,
/// the value queries and bundles show in its place and the journal carries as
/// `MAM_IDENTITY_HASH`. The key never leaves the daemon, so a support engineer who knows a
/// user's UPN asks here (`mamtelemetryctl pseudonym <upn>`) to filter the journal by user.
/// Only `pii` holders may ask: for anyone else it would undo the pseudonyms.
struct PseudonymRoutes: Sendable {
    let pseudonymizer: Pseudonymizer

    struct Answer: Encodable {
        var identity: String
        var pseudonym: String
        /// Ready to paste: `journalctl MAM_IDENTITY_HASH=user-…`.
        var journalMatch: String
    }

    func register(on api: APIRoutes) {
        api.requiring(.pii, apps: .none).get("/v1/pseudonyms") { _, context in
            let identity: String
            switch context.query.identity {
            case .identity(let upn): identity = upn
            case .pseudonym(let p): throw APIError.badRequest("invalid_parameter", "'\(p)' is already a pseudonym; give the UPN")
            case nil: throw APIError.badRequest("missing_parameter", "give the identity (UPN) as ?identity=user@contoso.com")
            }
            let pseudonym = pseudonymizer.identityPseudonym(identity)
            return try Response.json(
                Answer(identity: identity.lowercased(), pseudonym: pseudonym, journalMatch: "MAM_IDENTITY_HASH=\(pseudonym)"))
        }
    }
}
