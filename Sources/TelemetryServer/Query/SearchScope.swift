import Foundation
import Hummingbird
import Privacy
import StoreCore
import TelemetryModel

/// The support engineer's side of a record query, applied after the filters are parsed:
///
/// - `around=TIME` (with `span`, default 2m) is the window `TIME ± span`: "the logs around
///   this moment", with every other filter (the level included) kept.
/// - `device=` is resolved forgivingly (`DeviceResolution`).
/// - `identity=` tells the user's story (`expand=devices`, the default): the identity's own
///   records plus the records without an identity from the devices it used in the window
///   (device logs carry no identity, so without this a user's view misses the error logs
///   around a failed enrollment). A pseudonym gathers exactly what its UPN would, told back
///   as the pseudonym. `expand=none` keeps only the identity's own records.
///
/// What was searched is told back (`SearchDescription`), so an empty answer says what was
/// looked for, on which devices, and which ids come close.
enum SearchScope {
    static let defaultSpan: Int64 = 2 * 60_000
    /// At most this many devices join a user's story; more is named in the answer.
    static let maxIdentityDevices = 50

    static func apply(
        to q: inout RecordQuery, parameters: CallerQuery, store: any RecordStore, visibility: RecordVisibility, now: Int64
    ) async throws -> SearchDescription {
        let value = parameters.value
        var description = SearchDescription(kind: q.kind == .event ? "events" : "logs", env: q.env.rawValue)
        if let around = value("around") {
            guard q.since == nil, q.until == nil else {
                throw APIError.badRequest("invalid_parameter", "around is a window of its own: leave out since and until")
            }
            let t = try TimeParameter.parse("around", around, now: now)
            var span = defaultSpan
            if let text = value("span") {
                guard let ms = TimeExpression.duration(text), ms > 0, ms <= 7 * 86_400_000 else {
                    throw APIError.badRequest("invalid_parameter", "span '\(text)' must be a duration from 1s to 7d, like 30s, 2m or 1h")
                }
                span = ms
            }
            q.since = t.saturatingSubtracting(span)
            q.until = t.saturatingAdding(span)
            description.around = Timestamp.format(milliseconds: t)
            description.span = Timestamp.durationText(span)
        } else if value("span") != nil {
            throw APIError.badRequest("invalid_parameter", "span widens around=TIME; give around too")
        }
        var expand = true
        if let raw = value("expand")?.lowercased() {
            guard raw == "devices" || raw == "none" else {
                throw APIError.badRequest("invalid_parameter", "expand must be devices or none, not '\(raw)'")
            }
            expand = raw == "devices"
        }
        if let device = q.device {
            let resolution = try await DeviceResolution.resolve(
                device, env: q.env, app: q.app, apps: q.apps, store: store, visibility: visibility)
            q.device = resolution.searched
            description.device = resolution.shown(visibility)
        }
        if let user = q.identitySelector {
            let shown: String
            switch user {
            case .identity(let identity): shown = visibility.identity(identity) ?? ""
            case .pseudonym(let filter): shown = filter.pseudonym
            }
            var story = IdentityStory(identity: shown, expanded: false, devices: [])
            if expand {
                let devices = try await store.devices(
                    usedBy: user, env: q.env, apps: q.apps, since: q.since, until: q.until, limit: maxIdentityDevices)
                if !devices.isEmpty { q.identityDevices = Set(devices) }
                story.expanded = true
                story.devices = devices.map(visibility.clientString)
                story.devicesTruncated = devices.count == maxIdentityDevices
            }
            description.identity = story
        }
        description.since = q.since.map(Timestamp.format(milliseconds:))
        description.until = q.until.map(Timestamp.format(milliseconds:))
        for name in ["app", "session", "name", "statusCode", "level", "incident", "contains"] {
            if let v = value(name) { description.filters[name] = name == "app" ? visibility.clientString(v) : v }
        }
        return description
    }
}

/// The `search` member of a JSON page of `GET /v1/events` and `GET /v1/logs`: what was
/// searched, so an empty page explains itself.
struct SearchDescription: Encodable, Sendable {
    var kind: String
    var env: String
    var device: DeviceResolution?
    var identity: IdentityStory?
    var since: String?
    var until: String?
    var around: String?
    var span: String?
    /// The other filters given, by parameter name.
    var filters: [String: String] = [:]
}

/// How an `identity=` query was widened to the user's devices.
struct IdentityStory: Encodable, Sendable {
    /// The identity as this caller may see it (a pseudonym without the `pii` scope).
    var identity: String
    /// Whether the records without an identity of `devices` were included (`expand=devices`).
    var expanded: Bool
    /// The devices the identity's records came from in the window.
    var devices: [String]
    var devicesTruncated = false
}

extension Timestamp {
    /// `2m`, `90s`, `1h30m`: a span as people write it.
    static func durationText(_ ms: Int64) -> String {
        var s = ms / 1000
        var out = ""
        for (unit, size) in [("d", Int64(86_400)), ("h", 3_600), ("m", 60), ("s", 1)] where s >= size {
            out += "\(s / size)\(unit)"
            s %= size
        }
        return out.isEmpty ? "\(ms)ms" : out
    }
}
