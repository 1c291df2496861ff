import HTTPTypes
import Hummingbird
import TelemetryStore

/// Resolves the caller's bearer token and enforces the route's scope before the handler
/// runs. Tokens arrive as `Authorization: Bearer <token>`, or for ingest also as the
/// collector-style `X-APIKey: <token>` header that 1DS SDK clients send.
struct AuthMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let tokens: TokenStore
    let configuration: AuthConfiguration
    /// Read per request, so `systemctl reload` can change it.
    let metricsRequireToken: @Sendable () -> Bool

    func handle(_ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response) async throws -> Response {
        var context = context
        guard configuration.enabled else {
            context.principal = AuthConfiguration.localDevelopmentPrincipal
            return try await next(request, context)
        }
        guard let scope = RoutePolicy.requiredScope(method: request.method, path: request.uri.path, metricsRequireToken: metricsRequireToken())
        else {
            return try await next(request, context)
        }
        guard let presented = Self.presentedToken(request, allowAPIKey: scope == .ingest) else {
            throw APIError(
                .unauthorized, code: "unauthenticated",
                message: "this route needs a token with the '\(scope.rawValue)' scope: send Authorization: Bearer <token>",
                headers: [.wwwAuthenticate: "Bearer"])
        }
        guard let token = tokens.authenticate(presented) else {
            throw APIError(.unauthorized, code: "invalid_token", message: "the token is unknown or revoked", headers: [.wwwAuthenticate: "Bearer error=\"invalid_token\""])
        }
        guard token.allows(scope) else {
            throw APIError(
                .forbidden, code: "insufficient_scope",
                message: "token '\(token.name)' lacks the '\(scope.rawValue)' scope this route needs (it has: \(token.scopes.map(\.rawValue).sorted().joined(separator: ", ")))")
        }
        context.principal = token
        return try await next(request, context)
    }

    static func presentedToken(_ request: Request, allowAPIKey: Bool) -> String? {
        if let auth = request.headers[.authorization] {
            let parts = auth.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { return String(parts[1]).trimmingCharacters(in: .whitespaces) }
        }
        if allowAPIKey, let key = request.headers[HTTPField.Name("X-APIKey")!] { return key.trimmingCharacters(in: .whitespaces) }
        return nil
    }
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

import Foundation
