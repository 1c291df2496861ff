import ControlState
import Hummingbird
import Privacy
import StoreCore
import TelemetryModel

/// `GET /v1/devices?match=TEXT`: the devices a typed id may mean, for a search box (the
/// console's Find) and for the CLI before it follows a device: the exact id, else the ids
/// equal ignoring case or starting with the text (from three characters), else the nearest
/// ids. Read from the store's index of distinct devices, so it stays cheap on a big store.
struct DeviceRoutes: Sendable {
    let store: any RecordStore
    let pseudonymizer: Pseudonymizer

    struct Answer: Encodable {
        var match: String
        var env: String
        /// `exact`, `caseInsensitive`, `prefix` (one device), `ambiguous` (several), `none`.
        var resolution: String
        var devices: [DeviceResolution.DeviceSummary]
        /// More devices matched than `limit`.
        var truncated: Bool
        /// When nothing matched: the nearest ids, best first.
        var suggestions: [DeviceResolution.DeviceSummary]
    }

    func register(on api: APIRoutes) {
        api.requiring(.read, apps: .perApp).get("/v1/devices") { _, context in
            let value = context.query.value
            guard let text = value("match") else {
                throw APIError.badRequest("missing_parameter", "match is required: the device id, or its first characters")
            }
            let env = try value("env").map(EnvironmentParameter.parse) ?? .prod
            var limit = 10
            if let raw = value("limit") {
                guard let n = Int(raw), (1...100).contains(n) else {
                    throw APIError.badRequest("invalid_parameter", "limit must be an integer from 1 to 100, not '\(raw)'")
                }
                limit = n
            }
            let found = try await store.findDevices(
                DeviceLookup(text: text, env: env, app: value("app"), apps: context.readableApps, limit: limit))
            let visibility = RecordVisibility(principal: context.principal, pseudonymizer: pseudonymizer)
            let shown = visibility.clientString
            let summary = { (m: DeviceMatch) in DeviceResolution.DeviceSummary(m, shown: shown) }
            var answer = Answer(
                match: shown(text), env: env.rawValue, resolution: "none", devices: [], truncated: false,
                suggestions: found.near.map(summary))
            switch found.resolution(of: text) {
            case .exact(let m): (answer.resolution, answer.devices) = ("exact", [summary(m)])
            case .caseInsensitive(let m): (answer.resolution, answer.devices) = ("caseInsensitive", [summary(m)])
            case .prefix(let m): (answer.resolution, answer.devices) = ("prefix", [summary(m)])
            case .ambiguous(let candidates):
                (answer.resolution, answer.devices) = ("ambiguous", candidates.prefix(limit).map(summary))
                answer.truncated = candidates.count > limit
            case .none: break
            }
            return try Response.json(answer)
        }
    }
}
