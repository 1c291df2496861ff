import ControlState
import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Enforces one route group's declared `RouteAccess` and `AppRule` before its handlers run.
/// It is added to the group the routes are registered on, so the check applies to exactly
/// the route the router matched, however the path was spelled: there is no second table of
/// paths to drift from the router's own. It also reads the query parameters for the caller
/// (`CallerQuery`, into `context.query`), so their rules hold on every route. Every request
/// it lets through is written to the access log (admin actions at `notice`, the rest at
/// `debug`), which is also what the scope tests observe.
struct AccessMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let access: RouteAccess
    let apps: AppRule
    let tokens: TokenStore
    let incidents: IncidentApps
    let configuration: AuthConfiguration
    let accessLog: Logger

    func handle(_ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response) async throws
        -> Response
    {
        var context = context
        if !configuration.enabled {
            context.principal = AuthConfiguration.localDevelopmentPrincipal
        } else if access.needsToken {
            let scope = access.requiredScope
            guard let presented = BearerCredential.presented(in: request, allowAPIKey: scope == .ingest) else {
                let needs = scope.map { "a token with the '\($0.rawValue)' scope" } ?? "a token"
                throw APIError(
                    .unauthorized, code: "unauthenticated",
                    message: "this route needs \(needs): send Authorization: Bearer <token>",
                    headers: [.wwwAuthenticate: "Bearer"])
            }
            guard let token = tokens.authenticate(presented) else {
                throw APIError(
                    .unauthorized, code: "invalid_token", message: "the token is unknown or revoked",
                    headers: [.wwwAuthenticate: "Bearer error=\"invalid_token\""])
            }
            if let scope, !token.allows(scope) {
                throw APIError(
                    .forbidden, code: "insufficient_scope",
                    message:
                        "token '\(token.name)' lacks the '\(scope.rawValue)' scope this route needs (it has: \(token.scopes.map(\.rawValue).sorted().joined(separator: ", ")))"
                )
            }
            context.principal = token
        }
        // Open routes take no parameters; every other route reads them for its caller here.
        if let principal = context.principal {
            context.query = try CallerQuery(query: request.uri.query, piiAllowed: principal.allows(.pii))
            if let bound = principal.readableApps {
                try await apps.check(
                    context.query, incidentInPath: context.parameters.get("id"), token: principal, apps: bound, incidents: incidents)
            }
        }
        let scope = access.requiredScope
        accessLog.log(
            level: scope == .admin ? .notice : .debug, "access granted",
            metadata: [
                "route": "\(request.method) \(context.endpointPath ?? "?")",
                "access": "\(access)",
                "token": "\(context.principal?.id ?? "-")",
            ])
        return try await next(request, context)
    }
}

/// The token a request presents: `Authorization: Bearer <token>`, or for ingest also the
/// collector-style `X-APIKey: <token>` header that 1DS SDK clients send.
enum BearerCredential {
    static func presented(in request: Request, allowAPIKey: Bool) -> String? {
        if let auth = request.headers[.authorization] {
            let parts = auth.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]).trimmingCharacters(in: .whitespaces) }
        }
        if allowAPIKey, let key = request.headers[apiKey] { return key.trimmingCharacters(in: .whitespaces) }
        return nil
    }

    static let apiKey = HTTPField.Name("X-APIKey")!
}

/// `auth.enabled` (default true) and whether `/metrics` needs a token (default false:
/// it carries no personal data and scrapers are usually local).
public struct AuthConfiguration: Sendable, Hashable {
    public var enabled = true
    public var metricsRequireToken = false

    public init() {}

    /// With auth disabled (local development only), every caller acts as admin.
    static let localDevelopmentPrincipal = Token(
        id: "local", name: "auth-disabled", scopes: [.admin], apps: [], createdAt: 0, revoked: false)
}
