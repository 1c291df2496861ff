import ControlState
import HTTPTypes

/// What a `follow=true` stream was allowed when it opened, checked again whenever it wakes:
/// the token must still exist, not be revoked and still hold the scope the route needs, and
/// what the stream shows was decided by the token's `pii` scope and its apps, so a change to
/// either ends the stream too (the client reconnects and is checked afresh). Tokens do not
/// expire; a revoked one is refused at once by every route, and this makes a stream already
/// open follow suit.
struct FollowAccess: Sendable {
    let tokens: TokenStore
    let opened: Token
    let scope: Scope

    /// Why the stream must end now, or nil while the token still allows it.
    func refusal() -> APIError? {
        guard let now = tokens.token(id: opened.id), !now.revoked else {
            return APIError(.unauthorized, code: "token_revoked", message: "token '\(opened.name)' was revoked; the stream ends")
        }
        guard now.allows(scope) else {
            return APIError(
                .forbidden, code: "insufficient_scope",
                message: "token '\(opened.name)' no longer has the '\(scope.rawValue)' scope; the stream ends")
        }
        guard now.allows(.pii) == opened.allows(.pii), now.readableApps == opened.readableApps else {
            return APIError(
                .forbidden, code: "token_changed",
                message: "token '\(opened.name)' changed what it may see; the stream ends, reconnect to follow with its new access")
        }
        return nil
    }
}
