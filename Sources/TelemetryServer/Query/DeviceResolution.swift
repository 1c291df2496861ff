import Foundation
import Hummingbird
import Privacy
import StoreCore
import TelemetryModel

/// How a `device=` parameter was understood. People type device ids by hand (from a
/// screenshot, over the phone, lower-cased, the first characters of a GUID), so a lookup
/// forgives: the exact id wins; else an id equal ignoring case; else the one id starting with
/// what was typed (from three characters). Two or more candidates are refused with 400
/// `ambiguous_device` listing them; nothing at all searches the text as typed and suggests
/// the nearest ids. The lookup reads the store's index of distinct devices, not the records.
struct DeviceResolution: Encodable, Sendable {
    enum Match: String, Encodable, Sendable {
        case exact, caseInsensitive, prefix, none
    }

    /// What the caller typed.
    var asked: String
    /// The id searched: the resolved device, or `asked` when nothing matched.
    var searched: String
    var match: Match
    /// When nothing matched: the ids nearest to what was typed, best first.
    var suggestions: [DeviceSummary]?

    /// One device as an answer shows it.
    struct DeviceSummary: Encodable, Sendable {
        var deviceId: String
        var apps: [String]
        var firstSeen: String
        var lastSeen: String

        init(_ m: DeviceMatch, shown: (String) -> String) {
            deviceId = shown(m.deviceId)
            apps = m.apps.map(shown)
            firstSeen = Timestamp.format(milliseconds: m.firstSeen)
            lastSeen = Timestamp.format(milliseconds: m.lastSeen)
        }
    }

    /// Resolves `text` in `env` (within `app`'s devices when given, and only ever among the
    /// devices of `apps`, the caller's app binding, so neither a match nor a suggestion names
    /// another app's device). `visibility` decides how device and app ids in the answer look
    /// (a client string may hold personal data).
    static func resolve(
        _ text: String, env: TelemetryEnvironment, app: String?, apps: Set<String>?, store: any RecordStore,
        visibility: RecordVisibility
    ) async throws -> DeviceResolution {
        let found = try await store.findDevices(DeviceLookup(text: text, env: env, app: app, apps: apps, limit: 10))
        let shown = visibility.clientString
        switch found.resolution(of: text) {
        case .exact: return DeviceResolution(asked: text, searched: text, match: .exact)
        case .caseInsensitive(let m): return DeviceResolution(asked: text, searched: m.deviceId, match: .caseInsensitive)
        case .prefix(let m): return DeviceResolution(asked: text, searched: m.deviceId, match: .prefix)
        case .ambiguous(let candidates):
            let listed = candidates.prefix(10).map { DeviceSummary($0, shown: shown) }
            let more = candidates.count > 10 ? " and more" : ""
            var error = APIError(
                .badRequest, code: "ambiguous_device",
                message: "device '\(shown(text))' matches \(candidates.count > 10 ? "more than 10" : String(candidates.count)) devices: "
                    + listed.map(\.deviceId).joined(separator: ", ") + more + "; give more of the id")
            error.extraMembers = { w in w.field("candidates", rawJSON: JSONEncoding.bytes(listed)) }
            throw error
        case .none:
            return DeviceResolution(
                asked: text, searched: text, match: .none, suggestions: found.near.map { DeviceSummary($0, shown: shown) })
        }
    }

    /// The resolution as the answer shows it (ids in the caller's visible form).
    func shown(_ visibility: RecordVisibility) -> DeviceResolution {
        var copy = self
        copy.asked = visibility.clientString(asked)
        copy.searched = visibility.clientString(searched)
        return copy
    }
}

extension RecordVisibility {
    /// A client-supplied id (device, app) as this caller may see it: as sent with the `pii`
    /// scope, else with any personal data in it pseudonymized, as records show it.
    var clientString: @Sendable (String) -> String {
        let visibility = self
        return { value in
            var redactor = visibility.redactor()
            return redactor.scrub(text: value)
        }
    }
}

/// Encodes small answer parts for members written beside streamed or hand-built JSON.
enum JSONEncoding {
    static func bytes(_ value: some Encodable) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map(Array.init) ?? Array("null".utf8)
    }
}
