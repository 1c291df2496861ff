import TestSupport

/// A JSON value generated for the canonical-form properties, with two writers: `spelled`
/// writes it as a client might (random whitespace, every character escaped or raw at random,
/// `\/`, upper- and lower-case hex, surrogate pairs), `canonical` writes the one spelling the
/// daemon's rule asks for, implemented here independently of the daemon's writer.
indirect enum GeneratedJSON {
    case object([(String, GeneratedJSON)])
    case array([GeneratedJSON])
    case string(String)
    case number(String)
    case bool(Bool)
    case null
    /// Text written as it stands by both writers: a planted fault.
    case verbatim(String)

    /// Characters that exercise every branch of the escaping rule.
    static let alphabet: [Unicode.Scalar] =
        Array("abcXYZ019 _-.:".unicodeScalars) + ["/", "\"", "\\", "\u{7F}", "é", "ß", "日", "\u{2028}", "\u{FFFD}", "😀", "𝄞"]
        + (0..<0x20).map { Unicode.Scalar(UInt8($0)) }

    static let numbers = [
        "0", "-0", "7", "-12", "3.25", "-0.5", "1e5", "2.5E-3", "1E+2", "5e-324", "1.7976931348623157e308",
        "123456789012345678901234567890", "-9223372036854775808", "18446744073709551616",
    ]

    static func text(_ random: inout SeededRandom, maxLength: Int = 12) -> String {
        var s = String.UnicodeScalarView()
        for _ in 0..<random.below(maxLength + 1) { s.append(random.pick(alphabet)) }
        return String(s)
    }

    /// A value `depth` levels deep at most; object member names are unique per object.
    static func value(_ random: inout SeededRandom, depth: Int) -> GeneratedJSON {
        switch random.below(depth > 0 ? 8 : 5) {
        case 0: return .string(text(&random))
        case 1: return .number(random.pick(numbers))
        case 2: return .bool(random.below(2) == 0)
        case 3: return .null
        case 4: return .string(text(&random, maxLength: 40))
        case 5, 6: return object(&random, depth: depth - 1, members: random.below(5))
        default: return .array((0..<random.below(4)).map { _ in value(&random, depth: depth - 1) })
        }
    }

    static func object(_ random: inout SeededRandom, depth: Int, members: Int) -> GeneratedJSON {
        .object((0..<members).map { i in ("k\(i)" + text(&random, maxLength: 6), value(&random, depth: depth)) })
    }

    // MARK: - Writers

    /// A client's spelling: each character raw or escaped at random, whitespace anywhere
    /// allowed (line breaks only when the text is not an NDJSON line).
    func spelled(_ random: inout SeededRandom, lineBreaks: Bool = false) -> String {
        func space() -> String {
            random.below(4) == 0 ? random.pick(lineBreaks ? [" ", "\n", "\t", "\r\n ", "  "] : [" ", "\t", "\r", "  "]) : ""
        }
        switch self {
        case .object(let members):
            let inner = members.map { name, value in
                space() + Self.spell(name, &random) + space() + ":" + space() + value.spelled(&random, lineBreaks: lineBreaks) + space()
            }
            return "{" + space() + inner.joined(separator: ",") + "}"
        case .array(let elements):
            return "[" + space() + elements.map { $0.spelled(&random, lineBreaks: lineBreaks) + space() }.joined(separator: ",") + "]"
        case .string(let s): return Self.spell(s, &random)
        case .number(let n): return n
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .verbatim(let text): return text
        }
    }

    static func spell(_ s: String, _ random: inout SeededRandom) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            let v = scalar.value
            let mustEscape = v < 0x20 || scalar == "\"" || scalar == "\\"
            if !mustEscape, random.below(3) > 0 {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch random.below(3) {
            case 0 where Self.shortEscapes[v] != nil: out += "\\" + Self.shortEscapes[v]!
            case 1 where scalar == "/": out += "\\/"
            default: out += Self.uEscape(v, upper: random.below(2) == 0)
            }
        }
        return out + "\""
    }

    static let shortEscapes: [UInt32: String] = [0x22: "\"", 0x5C: "\\", 0x08: "b", 0x09: "t", 0x0A: "n", 0x0C: "f", 0x0D: "r"]

    static func hex4(_ v: UInt32, upper: Bool) -> String {
        let h = String(v, radix: 16, uppercase: upper)
        return String(repeating: "0", count: 4 - h.count) + h
    }

    /// `\uXXXX`, or a surrogate pair past the BMP.
    static func uEscape(_ v: UInt32, upper: Bool) -> String {
        guard v > 0xFFFF else { return "\\u" + hex4(v, upper: upper) }
        let u = v - 0x10000
        return "\\u" + hex4(0xD800 + (u >> 10), upper: upper) + "\\u" + hex4(0xDC00 + (u & 0x3FF), upper: upper)
    }

    /// The canonical spelling, written from the documented rule.
    var canonical: String {
        switch self {
        case .object(let members): "{" + members.map { Self.canonical($0) + ":" + $1.canonical }.joined(separator: ",") + "}"
        case .array(let elements): "[" + elements.map(\.canonical).joined(separator: ",") + "]"
        case .string(let s): Self.canonical(s)
        case .number(let n): n
        case .bool(let b): b ? "true" : "false"
        case .null: "null"
        case .verbatim(let text): text
        }
    }

    static func canonical(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            let v = scalar.value
            if let short = shortEscapes[v] {
                out += "\\" + short
            } else if v < 0x20 {
                out += "\\u" + hex4(v, upper: false)
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    // MARK: - Places to plant a fault

    /// Every object in the value with the path a refusal names it by (`""` for the root).
    func objects(at path: String = "") -> [(path: String, members: [(String, GeneratedJSON)])] {
        switch self {
        case .object(let members):
            return [(path, members)]
                + members.flatMap { name, value in value.objects(at: path.isEmpty ? name : path + "." + name) }
        case .array(let elements):
            return elements.enumerated().flatMap { i, value in value.objects(at: path + "[\(i)]") }
        default:
            return []
        }
    }

    /// The value with `member` added to its `index`th object (in ``objects(at:)`` order).
    func adding(_ member: (String, GeneratedJSON), toObject index: Int) -> GeneratedJSON {
        var counter = 0
        return adding(member, toObject: index, counter: &counter)
    }

    private func adding(_ member: (String, GeneratedJSON), toObject index: Int, counter: inout Int) -> GeneratedJSON {
        switch self {
        case .object(let members):
            let mine = counter
            counter += 1
            var changed = members.map { name, value in (name, value.adding(member, toObject: index, counter: &counter)) }
            if mine == index { changed.append(member) }
            return .object(changed)
        case .array(let elements):
            return .array(elements.map { $0.adding(member, toObject: index, counter: &counter) })
        default:
            return self
        }
    }
}
