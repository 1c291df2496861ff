import ControlState
import Foundation
import Hummingbird
import NIOFoundationCompat
import TelemetryModel

/// The app registry over HTTP (`mamtelemetryctl apps ...`): `GET /v1/apps`,
/// `PUT /v1/apps/{appId}`, `DELETE /v1/apps/{appId}`.
struct AppRoutes: Sendable {
    let registry: AppRegistry
    let clock: any WallClock

    struct Registration: Codable {
        var telemetryDisabled: Bool?
        var usePPE: Bool?
        var verboseLogging: Bool?
        var source: String?
    }

    func register(on api: APIRoutes) {
        let admin = api.requiring(.admin, apps: .none)
        admin.get("/v1/apps") { _, _ in try Response.json(["apps": registry.all()]) }
        admin.put("/v1/apps/{appId}") { request, context in
            let appId = context.parameters.get("appId") ?? ""
            guard !appId.isEmpty, appId.count <= 255 else {
                throw APIError.badRequest("invalid_parameter", "appId must be 1-255 characters")
            }
            let body = try await request.body.collect(upTo: 64 * 1024)
            let reg: Registration
            do {
                reg = try JSONDecoder().decode(Registration.self, from: Data(buffer: body))
            } catch {
                throw APIError.badRequest(
                    "invalid_body",
                    "body must be {\"telemetryDisabled\": bool, \"usePPE\": bool, \"verboseLogging\": bool, \"source\": string}")
            }
            let entry = try await registry.register(
                appId: appId,
                flags: AppFlags(telemetryDisabled: reg.telemetryDisabled, usePPE: reg.usePPE, verboseLogging: reg.verboseLogging),
                source: reg.source ?? "api", now: clock.nowMilliseconds())
            return try Response.json(entry)
        }
        admin.delete("/v1/apps/{appId}") { _, context in
            let appId = context.parameters.get("appId") ?? ""
            guard try await registry.remove(appId: appId) else { throw APIError.notFound("app '\(appId)' is not registered") }
            return Response(status: .noContent)
        }
    }
}
