public import Foundation
public import TelemetryModel

/// Reads an app's MAM flags from its real `Info.plist` (XML or binary) — the
/// `IntuneMAMSettings` dictionary — or from an older SDK's `MAMEnvironment.plist`, whose
/// `UsePPE` sits at the top level. This is what `mamtelemetryctl apps import` sends to the
/// daemon's app registry. Decoded with `PropertyListDecoder` into just the keys we need:
/// the `PropertyListSerialization` route bridges every value (sets, dates, data) to
/// Foundation objects and crashed on some valid binary plists (found by fuzzing).
public struct InfoPlistSettings: Sendable, Hashable {
    /// `CFBundleIdentifier`, when the plist has one (an Info.plist does; MAMEnvironment.plist not).
    public var bundleId: String?
    public var flags: AppFlags

    public enum ReadError: Error, CustomStringConvertible {
        case notAPlist(String)

        public var description: String {
            switch self {
            case .notAPlist(let why): "not a property list dictionary (XML or binary): \(why)"
            }
        }
    }

    public init(data: Data) throws {
        let bytes = [UInt8](data)
        if BinaryPlist.isBinary(bytes) {
            let top: [String: BinaryPlist.Value]
            do {
                top = try BinaryPlist.topDictionary(bytes)
            } catch let e as BinaryPlist.Malformed {
                throw ReadError.notAPlist("binary plist: \(e.reason)")
            }
            func flags(_ d: [String: BinaryPlist.Value]) -> AppFlags {
                var values: [String: FlagValue] = [:]
                for key in AppFlags.Key.telemetryDisabled + AppFlags.Key.usePPE + AppFlags.Key.verboseLogging {
                    switch d[key] {
                    case .bool(let v)?: values[key] = .bool(v)
                    case .int(let v)?: values[key] = .number(Double(v))
                    case .real(let v)?: values[key] = .number(v)
                    case .string(let v)?: values[key] = .string(v)
                    default: break
                    }
                }
                return AppFlags(settings: values)
            }
            if case .string(let id)? = top["CFBundleIdentifier"] { bundleId = id } else { bundleId = nil }
            var result = flags(top)
            if case .dictionary(let mam)? = top["IntuneMAMSettings"] { result = flags(mam).merged(with: result) }
            self.flags = result
            return
        }
        // Foundation's XML plist decoder traps on invalid UTF-8 inside values (found by
        // fuzzing): a text plist that is not valid UTF-8 is refused before it gets there.
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw ReadError.notAPlist("not a binary plist, and not valid UTF-8 text")
        }
        let top: PlistTop
        do {
            top = try PropertyListDecoder().decode(PlistTop.self, from: data)
        } catch {
            throw ReadError.notAPlist(String(describing: error).prefix(300).description)
        }
        bundleId = top.bundleId
        var flags = AppFlags(settings: top.flags)
        if let mam = top.mamSettings {
            flags = AppFlags(settings: mam.flags).merged(with: flags)
        }
        self.flags = flags
    }

    /// A dictionary read for the flag keys only; other members are never decoded.
    struct FlagDictionary: Decodable {
        var flags: [String: FlagValue] = [:]

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: AnyKey.self)
            for key in AppFlags.Key.telemetryDisabled + AppFlags.Key.usePPE + AppFlags.Key.verboseLogging {
                let k = AnyKey(key)
                guard c.contains(k) else { continue }
                if let b = try? c.decode(Bool.self, forKey: k) {
                    flags[key] = .bool(b)
                } else if let d = try? c.decode(Double.self, forKey: k) {
                    flags[key] = .number(d)
                } else if let s = try? c.decode(String.self, forKey: k) {
                    flags[key] = .string(s)
                }
            }
        }
    }

    struct PlistTop: Decodable {
        var bundleId: String?
        var flags: [String: FlagValue]
        var mamSettings: FlagDictionary?

        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: AnyKey.self)
            bundleId = try? c.decode(String.self, forKey: AnyKey("CFBundleIdentifier"))
            mamSettings = try? c.decode(FlagDictionary.self, forKey: AnyKey("IntuneMAMSettings"))
            flags = try FlagDictionary(from: decoder).flags
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ s: String) { stringValue = s }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
