import Archive
import Bundles
import ControlState
import Foundation
import HTTPTypes
import Hummingbird
import Privacy
import StoreCore
import TelemetryModel

/// `GET /v1/bundles` and `GET /v1/incidents/{id}/bundle`: a diagnostic archive
/// streamed to the client while it is built.
struct BundleRoutes: Sendable {
    let store: any RecordStore
    let pseudonymizer: Pseudonymizer
    let clock: any WallClock
    /// Where a bundle's members are spooled while the archive streams out.
    let temporaryDirectory: URL

    func register(on api: APIRoutes) {
        let bundles = api.requiring(.bundle, apps: .perApp)
        bundles.get("/v1/bundles") { _, context in try await bundle(context, incident: nil) }
        bundles.get("/v1/incidents/{id}/bundle") { _, context in
            try await bundle(context, incident: context.parameters.get("id") ?? "")
        }
    }

    /// Who asked, for the manifest: the token's name and id.
    static func caller(_ principal: Token?) -> String {
        guard let principal else { return "anonymous" }
        return "\(principal.name) (token \(principal.id))"
    }

    func bundle(_ context: AppRequestContext, incident: String?) async throws -> Response {
        let principal = context.principal
        let value = context.query.value
        let now = clock.nowMilliseconds()
        func time(_ name: String) throws -> Int64? {
            guard let raw = value(name) else { return nil }
            return try TimeParameter.parse(name, raw, now: now)
        }
        let env = try value("env").map(EnvironmentParameter.parse)
        var format = ArchiveFormat.zip
        if let raw = value("format") {
            guard let f = ArchiveFormat(rawValue: raw == "tgz" ? "tar.gz" : raw) else {
                throw APIError.badRequest("invalid_parameter", "'format' must be zip or tar.gz")
            }
            format = f
        }
        var expand = true
        if let raw = value("expand")?.lowercased() {
            guard raw == "devices" || raw == "none" else {
                throw APIError.badRequest("invalid_parameter", "'expand' must be devices or none, not '\(raw)'")
            }
            expand = raw == "devices"
        }
        let visibility = RecordVisibility(principal: principal, pseudonymizer: pseudonymizer)
        var bundleRequest = BundleRequest(
            incident: incident ?? value("incident"), device: value("device"), app: value("app"), session: value("session"),
            since: try time("since"), until: try time("until"),
            env: env, format: format, caller: Self.caller(principal), piiAllowed: visibility.piiAllowed, expandIdentity: expand)
        switch context.query.identity {
        case .identity(let upn): bundleRequest.identity = upn
        case .pseudonym(let p): bundleRequest.identityPseudonym = p
        case nil: break
        }
        bundleRequest.apps = context.readableApps
        if let device = bundleRequest.device {
            // Typed by hand: resolved as the query API does; a device with no records is refused
            // with the nearest ids rather than answered with an empty archive.
            let resolution = try await DeviceResolution.resolve(
                device, env: env ?? .prod, app: bundleRequest.app, apps: bundleRequest.apps, store: store, visibility: visibility)
            if resolution.match == .none {
                let near = (resolution.suggestions ?? []).map(\.deviceId)
                throw APIError(
                    .notFound, code: "unknown_device",
                    message: "no records of device '\(visibility.clientString(device))' in \((env ?? .prod).rawValue)"
                        + (near.isEmpty ? "" : "; nearest ids: \(near.joined(separator: ", "))"))
            }
            bundleRequest.device = resolution.searched
        }
        let builder = BundleBuilder(
            store: store, pseudonymizer: pseudonymizer,
            temporaryDirectory: temporaryDirectory, daemonVersion: DaemonVersion.current)
        let prepared: PreparedBundle
        do {
            prepared = try await builder.prepare(bundleRequest, now: now)
        } catch let e as BundleError {
            switch e {
            case .unknownIncident: throw APIError.notFound(e.description)
            case .missingScope: throw APIError.badRequest("missing_scope", e.description)
            default: throw APIError.badRequest("invalid_parameter", e.description)
            }
        }
        var headers: HTTPFields = [:]
        headers[.contentType] = format.contentType
        headers[.contentDisposition] = "attachment; filename=\"\(prepared.fileName)\""
        headers[.cacheControl] = "no-store"
        return Response(
            status: .ok, headers: headers,
            body: ResponseBody { writer in
                var sink = ResponseBodySink(writer: writer)
                try await builder.write(prepared, to: &sink)
                writer = sink.writer
                try await writer.finish(nil)
            })
    }
}

/// Hands archive bytes to the HTTP response as they are produced; each write waits for the
/// connection, which is the back-pressure that keeps large bundles out of memory.
struct ResponseBodySink: BundleSink {
    var writer: any ResponseBodyWriter

    mutating func write(_ bytes: [UInt8]) async throws {
        try await writer.write(ByteBuffer(bytes: bytes))
    }
}
