import Foundation

/// Reads an app's MAM flags from its real `Info.plist` (XML or binary) — the
/// `IntuneMAMSettings` dictionary — or from an older SDK's `MAMEnvironment.plist`, whose
/// `UsePPE` sits at the top level. This is what `mamtelemetryctl apps import` sends to the
/// daemon's app registry.
public struct InfoPlistSettings: Sendable, Hashable {
    /// `CFBundleIdentifier`, when the plist has one (an Info.plist does; MAMEnvironment.plist not).
    public var bundleId: String?
    public var flags: AppFlags

    public enum ReadError: Error, CustomStringConvertible {
        case notAPlist(String)
        case notADictionary

        public var description: String {
            switch self {
            case .notAPlist(let why): "not a property list (XML or binary): \(why)"
            case .notADictionary: "the property list's top level is not a dictionary"
            }
        }
    }

    public init(data: Data) throws {
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw ReadError.notAPlist(String(describing: error))
        }
        guard let top = object as? [String: Any] else { throw ReadError.notADictionary }
        bundleId = top["CFBundleIdentifier"] as? String
        var flags = AppFlags(settings: Self.flagValues(top))
        if let mam = top["IntuneMAMSettings"] as? [String: Any] {
            flags = AppFlags(settings: Self.flagValues(mam)).merged(with: flags)
        }
        self.flags = flags
    }

    /// Plist values arrive as Bool, NSNumber or String; keep only the ones a flag can use.
    static func flagValues(_ dict: [String: Any]) -> [String: FlagValue] {
        var out: [String: FlagValue] = [:]
        let keys = AppFlags.Key.telemetryDisabled + AppFlags.Key.usePPE + AppFlags.Key.verboseLogging
        for key in keys {
            switch dict[key] {
            case let b as Bool: out[key] = .bool(b)
            case let n as NSNumber: out[key] = .number(n.doubleValue)
            case let s as String: out[key] = .string(s)
            default: break
            }
        }
        return out
    }
}
