/// The short id a user reads to support over the phone (`MAM-7K2Q-9XPF`), next to a GUID.
/// The alphabet leaves out characters people confuse when reading or hearing them
/// (0/O, 1/I/L, U/V), so any id a person writes down resolves.
public struct IncidentID: Sendable, Hashable, Codable, CustomStringConvertible {
    public static let alphabet = Array("23456789ABCDEFGHJKMNPQRSTWXYZ")
    public let value: String

    public var description: String { value }

    /// A fresh random id: 8 symbols from a 29-letter alphabet, ~5·10^11 possibilities.
    public static func random<G: RandomNumberGenerator>(using generator: inout G) -> IncidentID {
        var chars: [Character] = []
        for _ in 0..<8 { chars.append(alphabet.randomElement(using: &generator)!) }
        return IncidentID(
            value: "MAM-" + String(chars[0..<4]) + "-" + String(chars[4..<8]))
    }

    public static func random() -> IncidentID {
        var g = SystemRandomNumberGenerator()
        return random(using: &g)
    }

    /// Accepts what a person types: any case, with or without the prefix and dashes.
    public init?(parsing text: String) {
        var symbols = text.uppercased().filter { $0 != "-" && $0 != " " }
        // Strip the prefix only when it is one: an id's own symbols may start with "MAM".
        if symbols.count == 11, symbols.hasPrefix("MAM") { symbols.removeFirst(3) }
        guard symbols.count == 8, symbols.allSatisfy({ IncidentID.alphabet.contains($0) }) else {
            return nil
        }
        let chars = Array(symbols)
        value = "MAM-" + String(chars[0..<4]) + "-" + String(chars[4..<8])
    }

    private init(value: String) { self.value = value }
}
