import Crypto
import Foundation
import Privacy

/// A fixed key and helpers to read what a caller is shown.
enum RedactionFixtures {
    static let pseudonymizer = Pseudonymizer(key: SymmetricKey(data: [UInt8](repeating: 7, count: 32)))

    static func visibility(pii: Bool) -> RecordVisibility {
        RecordVisibility(piiAllowed: pii, pseudonymizer: pseudonymizer)
    }

    /// `json` as a caller with or without `pii` is shown it.
    static func shown(_ json: String, verbose: Bool = false, pii: Bool = false) -> String {
        String(decoding: visibility(pii: pii).present(json: Array(json.utf8), verbose: verbose), as: UTF8.self)
    }

    /// The parsed value, or nil when `text` is not JSON.
    static func parse(_ text: String) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    /// Every decoded string of a parsed value: member names and string values, at any depth.
    static func strings(_ value: Any?) -> [String] {
        switch value {
        case let s as String: return [s]
        case let o as [String: Any]: return o.flatMap { [$0.key] + strings($0.value) }
        case let a as [Any]: return a.flatMap(strings)
        default: return []
        }
    }

    static func userPseudonym(_ upn: String) -> String { pseudonymizer.pseudonym(upn, kind: "user") }
    static func mask(_ credential: String) -> String { pseudonymizer.pseudonym(credential, kind: "token") }
}
