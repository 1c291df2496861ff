/// The SDK settings that change what the daemon does with an app's data.
/// Each flag is tri-state: `nil` means "this source did not say", which matters because the
/// event's own settings and the app registry are combined (the conservative value wins).
public struct AppFlags: Sendable, Hashable, Codable {
    /// `MAMTelemetryDisabled`: the app opted out; its automatic telemetry is dropped at the edge.
    public var telemetryDisabled: Bool?
    /// `MAMTelemetryUsePPE` (or the older `UsePPE` / `com.microsoft.intune.mam.useppe`).
    public var usePPE: Bool?
    /// `VerboseLoggingEnabled`: the app sends verbose, possibly PII-bearing logs.
    public var verboseLogging: Bool?

    public init(telemetryDisabled: Bool? = nil, usePPE: Bool? = nil, verboseLogging: Bool? = nil) {
        self.telemetryDisabled = telemetryDisabled
        self.usePPE = usePPE
        self.verboseLogging = verboseLogging
    }

    public static let unspecified = AppFlags()

    /// Every key spelling the SDK generations use, mapped to the flag it sets.
    public enum Key {
        public static let telemetryDisabled = ["MAMTelemetryDisabled"]
        public static let usePPE = ["MAMTelemetryUsePPE", "UsePPE", "com.microsoft.intune.mam.useppe"]
        public static let verboseLogging = ["VerboseLoggingEnabled"]
    }

    /// Reads the flags from a settings dictionary (an event's `settings` object or a plist's
    /// `IntuneMAMSettings`). Values may be booleans, numbers or the plist-style strings
    /// "YES"/"NO", "true"/"false", "1"/"0"; anything else counts as "not said".
    public init(settings: [String: FlagValue]) {
        func first(_ keys: [String]) -> Bool? {
            var result: Bool?
            for key in keys {
                if let value = settings[key]?.boolValue {
                    // Within one source, any spelling saying YES wins (conservative).
                    result = (result ?? false) || value
                }
            }
            return result
        }
        self.init(
            telemetryDisabled: first(Key.telemetryDisabled),
            usePPE: first(Key.usePPE),
            verboseLogging: first(Key.verboseLogging))
    }

    /// Combines two sources: a flag is on when either source turns it on.
    public func merged(with other: AppFlags) -> AppFlags {
        func combine(_ a: Bool?, _ b: Bool?) -> Bool? {
            switch (a, b) {
            case (nil, nil): nil
            case (let x?, nil), (nil, let x?): x
            case (let x?, let y?): x || y
            }
        }
        return AppFlags(
            telemetryDisabled: combine(telemetryDisabled, other.telemetryDisabled),
            usePPE: combine(usePPE, other.usePPE),
            verboseLogging: combine(verboseLogging, other.verboseLogging))
    }
}

/// A settings value as it appears on the wire or in a plist.
public enum FlagValue: Sendable, Hashable, Decodable {
    case bool(Bool)
    case number(Double)
    case string(String)
    case other

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let b = try? container.decode(Bool.self) {
            self = .bool(b)
        } else if let d = try? container.decode(Double.self) {
            self = .number(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else {
            self = .other
        }
    }

    /// The boolean this value stands for, or nil when it is not a recognisable flag value.
    public var boolValue: Bool? {
        switch self {
        case .bool(let b): return b
        case .number(let d): return d != 0
        case .string(let s):
            switch s.lowercased() {
            case "yes", "true", "1", "y": return true
            case "no", "false", "0", "n", "": return false
            default: return nil
            }
        case .other: return nil
        }
    }
}
