import ControlState
import Foundation
import Hummingbird
import NIOFoundationCompat
import TelemetryModel

/// `POST /v1/tokens`, `GET /v1/tokens`, `DELETE /v1/tokens/{id}` (admin scope), behind
/// `mamtelemetryctl tokens create|list|revoke`. The secret is in the create answer only.
struct TokenRoutes: Sendable {
    let tokens: TokenStore
    let clock: any WallClock

    struct Create: Decodable {
        var name: String
        var scopes: [String]
        var apps: [String]?
    }

    func register(on api: APIRoutes) {
        let admin = api.requiring(.admin, apps: .none)
        admin.post("/v1/tokens") { request, _ in
            let body = try await request.body.collect(upTo: 64 * 1024)
            guard let create = try? JSONDecoder().decode(Create.self, from: Data(buffer: body)) else {
                throw APIError.badRequest(
                    "invalid_body",
                    "body must be {\"name\": string, \"scopes\": [\"ingest\"|\"read\"|\"bundle\"|\"pii\"|\"admin\"], \"apps\": [app ids]}")
            }
            var scopes = Set<Scope>()
            for s in create.scopes {
                guard let scope = Scope(rawValue: s) else {
                    throw APIError.badRequest("invalid_scope", "unknown scope '\(s)'; scopes are ingest, read, bundle, pii, admin")
                }
                scopes.insert(scope)
            }
            guard !scopes.isEmpty, !create.name.isEmpty, create.name.count <= 100 else {
                throw APIError.badRequest("invalid_body", "a token needs a name (1-100 characters) and at least one scope")
            }
            do {
                let (token, secret) = try await tokens.create(
                    name: create.name, scopes: scopes, apps: create.apps ?? [], now: clock.nowMilliseconds())
                return try Response.json(Created(token: secret, info: token), status: .created)
            } catch let error as TokenAppsError {
                throw APIError.badRequest("invalid_apps", error.description)
            }
        }
        admin.get("/v1/tokens") { _, _ in try Response.json(["tokens": tokens.list()]) }
        admin.delete("/v1/tokens/{id}") { _, context in
            let id = context.parameters.get("id") ?? ""
            guard try await tokens.revoke(id: id) else { throw APIError.notFound("no token with id '\(id)'") }
            return Response(status: .noContent)
        }
    }

    struct Created: Encodable {
        var token: String
        var info: Token
    }
}
