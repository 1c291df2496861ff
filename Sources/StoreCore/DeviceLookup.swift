public import TelemetryModel

/// One device the store holds records of: its id as sent, the apps it sent for and when its
/// records were first and last received (to the hour).
public struct DeviceMatch: Sendable, Hashable {
    public var deviceId: String
    public var apps: [String]
    public var firstSeen: Int64
    public var lastSeen: Int64

    public init(deviceId: String, apps: [String], firstSeen: Int64, lastSeen: Int64) {
        self.deviceId = deviceId
        self.apps = apps
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}

/// What a device lookup found for the text a person typed: the device with exactly that id,
/// the devices whose id equals it ignoring case or starts with it (ignoring case), and when
/// neither exists, the ids nearest to it in sorted order (those sharing the longest prefix).
public struct DeviceLookupResult: Sendable, Hashable {
    public var exact: DeviceMatch?
    /// Case-insensitive equal or prefix matches, at most `limit` + 1 (so "more than limit" shows).
    public var matches: [DeviceMatch]
    /// Only when nothing matched: the nearest ids, best first.
    public var near: [DeviceMatch]

    public init(exact: DeviceMatch? = nil, matches: [DeviceMatch] = [], near: [DeviceMatch] = []) {
        self.exact = exact
        self.matches = matches
        self.near = near
    }

    /// Prefix matching starts at this many characters: a shorter prefix would "resolve" to
    /// whatever device happens to be alone under one or two letters.
    public static let minimumPrefix = 3
}

/// A device lookup: `text` as typed, in `env`, optionally within one app's devices.
public struct DeviceLookup: Sendable, Hashable {
    public var text: String
    public var env: TelemetryEnvironment
    public var app: String?
    /// Only devices seen in these apps (the caller's app binding); nil: every app.
    public var apps: Set<String>?
    public var limit: Int

    public init(text: String, env: TelemetryEnvironment = .prod, app: String? = nil, apps: Set<String>? = nil, limit: Int = 10) {
        self.text = text
        self.env = env
        self.app = app
        self.apps = apps
        self.limit = limit
    }
}

extension DeviceLookupResult {
    /// What the typed text means: the exact id wins; else the one id equal ignoring case;
    /// else the one id it starts with; several candidates are ambiguous; none is none.
    public enum Resolution: Sendable, Hashable {
        case exact(DeviceMatch)
        case caseInsensitive(DeviceMatch)
        case prefix(DeviceMatch)
        case ambiguous([DeviceMatch])
        case none
    }

    public func resolution(of text: String) -> Resolution {
        if let exact { return .exact(exact) }
        let lower = text.lowercased()
        let sameIgnoringCase = matches.filter { $0.deviceId.lowercased() == lower }
        let candidates = sameIgnoringCase.isEmpty ? matches : sameIgnoringCase
        switch candidates.count {
        case 0: return .none
        case 1: return sameIgnoringCase.isEmpty ? .prefix(candidates[0]) : .caseInsensitive(candidates[0])
        default: return .ambiguous(candidates)
        }
    }

    /// Folds rows of (device, app, firstSeen, lastSeen), in device order, into one match per device.
    public static func fold(_ rows: [(device: String, app: String, first: Int64, last: Int64)]) -> [DeviceMatch] {
        var out: [DeviceMatch] = []
        for row in rows {
            if let last = out.last, last.deviceId == row.device {
                out[out.count - 1].apps.append(row.app)
                out[out.count - 1].firstSeen = min(last.firstSeen, row.first)
                out[out.count - 1].lastSeen = max(last.lastSeen, row.last)
            } else {
                out.append(DeviceMatch(deviceId: row.device, apps: [row.app], firstSeen: row.first, lastSeen: row.last))
            }
        }
        return out
    }

    /// The `near` candidates ranked: longest common prefix with `text` (ignoring case) first.
    public static func rankNear(_ candidates: [DeviceMatch], to text: String, limit: Int) -> [DeviceMatch] {
        let wanted = Array(text.lowercased())
        func shared(_ id: String) -> Int {
            zip(wanted, Array(id.lowercased())).prefix { $0 == $1 }.count
        }
        return candidates.enumerated().sorted { a, b in
            let (sa, sb) = (shared(a.element.deviceId), shared(b.element.deviceId))
            return sa != sb ? sa > sb : a.offset < b.offset
        }.prefix(limit).map(\.element)
    }
}
