import Foundation
import TelemetryModel
import TestSupport
import TextExportReference

/// Seeded console-export text in every shape `TextLogLine` documents, with what each entry
/// must read back as: timestamps with either separator, any fraction and zone; processes
/// bracketed, nested, bare (Apple) or absent; levels bare, bracketed, in angle brackets, with
/// a colon, in any case; components bracketed (with brackets inside) or `Name:`; messages
/// with brackets, colons, e-mail addresses and non-ASCII; continuation lines (stack frames, a
/// pasted HTTP response with a refresh token, JSON, blank lines inside, an indented
/// timestamp, timestamps that name no instant); junk before the first entry; CRLF on some
/// lines. `mutate` then damages a document byte by byte.
struct TextExportGenerator {
    var rng: SeededRandom

    struct Document {
        var text: String
        /// What the entries must read back as (lines before the first entry included).
        var expected: [TextExportReference.Entry]
    }

    static let levels: [(String, LogLevel)] = [
        ("verbose", .verbose), ("debug", .verbose), ("trace", .verbose), ("info", .info), ("information", .info),
        ("notice", .info), ("warning", .warning), ("warn", .warning), ("error", .error), ("err", .error), ("fatal", .error),
        ("critical", .error),
    ]
    static let firstWords = ["No", "policy", "Enrollment", "token", "sending", "Got", "user", "HTTP", "retrying", "MAM", "ok", "42"]
    static let words = [
        "policy", "cached", "for", "jane.doe@contoso.com", "[bracketed]", "a:b", "<tag>", "Straße", "日本", "status=200", "x[1:2]",
        "WARNING", "-", "'quoted'", "\"dq\"", "{json}", "9:41", "[Comp]",
    ]
    static let continuations = [
        "    at MAMPolicyManager.fetch(MAMPolicyManager.swift:212)", "HTTP/1.1 400 Bad Request", "Content-Type: application/json",
        "{\"error\":\"invalid_grant\",\"refresh_token\":\"0.AXoA-secret\"}", "\tcaused by: NSURLErrorDomain -1009",
        "phone: +1 425 555 0100", "2026 was a long year", " 2026-11-21T10:00:00Z indented, not an entry", "]] unbalanced [[",
        "WARNING this line has no timestamp", "日本語の行", "2026-13-01T10:00:00Z not a month", "2026-11-21T24:00:00Z not an hour",
        "0000-06-01T00:00:00Z before year 1", "2026-11-21T10:00:00Zoops", "2026-11-21T10:00:00.x",
    ]
    static let junk = ["--- Intune diagnostics export ---", "Device: iPhone15,2 iOS 18.1", "=====", "MyApp[412:9921] <Error> no time"]

    /// What a mutation inserts: separators, brackets, level words, a combining mark, Prepend
    /// and joiner scalars, a no-break space, non-ASCII, bytes that are not UTF-8. No digit is
    /// inserted or deleted: a mutated timestamp stays the instant it was or stops being one,
    /// so the comparison does not hang on which impossible dates and offsets `Timestamp`
    /// refuses (its own tests hold those; `FuzzTextLog` tries every byte).
    static let mutationPieces: [[UInt8]] =
        [" ", "\t", "\r", "\n", "\r\n", "[", "]", "<", ">", ":", "-", ".", "[E]", "<Fault>", "WARN", "error:", "[x[", "]]", "Tag:"].map {
            Array($0.utf8)
        } + ["\u{301}", "\u{600}", "\u{200D}", "\u{A0}", "é", "日", "👍🏽"].map { Array($0.utf8) } + [[0xFF], [0xC3], [0xE2, 0x82]]

    /// `text` with `edits` random insertions, deletions and replacements.
    mutating func mutate(_ text: String, edits: Int) -> [UInt8] {
        var bytes = Array(text.utf8)
        for _ in 0..<edits {
            let at = rng.below(bytes.count + 1)
            switch rng.below(3) {
            case 0: bytes.insert(contentsOf: pick(Self.mutationPieces), at: at)
            case 1:
                let range = at..<min(bytes.count, at + 1 + rng.below(3))
                if !bytes[range].contains(where: { (0x30...0x39).contains($0) }) { bytes.removeSubrange(range) }
            default:
                if at < bytes.count { bytes.replaceSubrange(at...at, with: pick(Self.mutationPieces)) }
            }
        }
        return bytes
    }

    mutating func pick<T>(_ values: [T]) -> T { rng.pick(values) }
    mutating func chance(_ percent: Int) -> Bool { rng.below(100) < percent }
    mutating func gap() -> String { pick([" ", " ", " ", "  ", "\t"]) }

    /// A timestamp as text and the epoch milliseconds it stands for.
    mutating func timestamp() -> (String, Int64) {
        let (year, month, day) = (2020 + rng.below(10), 1 + rng.below(12), 1 + rng.below(28))
        let (hour, minute, second) = (rng.below(24), rng.below(60), rng.below(60))
        let millis = rng.below(1000)
        let separator = pick(["T", "T", " ", "t"])
        var text = String(format: "%04d-%02d-%02d", year, month, day) + separator + String(format: "%02d:%02d:%02d", hour, minute, second)
        var ms =
            Int64(Timestamp.daysFromCivilForTests(year: year, month: month, day: day)) * 86_400_000
            + Int64(hour * 3600 + minute * 60 + second) * 1000
        switch rng.below(4) {
        case 0: break
        case 1:
            text += String(format: ".%03d", millis)
            ms += Int64(millis)
        case 2:
            text += String(format: ",%03d456", millis)
            ms += Int64(millis)
        default:
            text += String(format: ".%d", millis / 100)
            ms += Int64(millis / 100 * 100)
        }
        let offset = (rng.below(27) - 13) * 60 + pick([0, 0, 30, 45])
        switch rng.below(5) {
        case 0: break
        case 1: text += pick(["Z", "z"])
        case 2: text += (offset < 0 ? "-" : "+") + String(format: "%02d:%02d", abs(offset) / 60, abs(offset) % 60)
        case 3: text += (offset < 0 ? "-" : "+") + String(format: "%02d%02d", abs(offset) / 60, abs(offset) % 60)
        default: text += (offset < 0 ? "-" : "+") + String(format: "%02d", abs(offset) / 60)
        }
        if let zone = Self.zoneMinutes(text) { ms -= Int64(zone) * 60_000 }
        return (text, ms)
    }

    /// The zone offset in minutes written at the end of a generated timestamp.
    static func zoneMinutes(_ text: String) -> Int? {
        let tail = text.dropFirst(19).drop { $0 == "." || $0 == "," || $0.isNumber }
        guard let sign = tail.first, sign == "+" || sign == "-" else { return nil }
        let digits = tail.dropFirst().filter(\.isNumber)
        let minutes = Int(digits.prefix(2))! * 60 + (digits.count > 2 ? Int(digits.dropFirst(2))! : 0)
        return sign == "-" ? -minutes : minutes
    }

    /// One entry's first line and what it reads as.
    mutating func entryLine() -> (String, Int64, LogLevel, String?, String) {
        let (ts, ms) = timestamp()
        var line = ts
        var level = LogLevel.info
        var sawLevel = false
        let processKind = rng.below(6)
        var levelText: String?
        if processKind == 4 || chance(70) {
            let (word, l) = pick(Self.levels)
            let cased = pick([word, word.uppercased(), word.prefix(1).uppercased() + word.dropFirst()])
            level = l
            sawLevel = true
            switch rng.below(4) {
            case 0: levelText = cased
            case 1: levelText = "[\(cased)]"
            case 2: levelText = "<\(cased)>"
            default: levelText = cased + ":"
            }
            if chance(5) {
                (levelText, level) = pick([
                    ("<Default>", .info), ("<Fault>", .error), ("[E]", .error), ("<w>", .warning), ("[V]", .verbose),
                ])
            }
        }
        let name = pick(["ComMail", "MyApp", "Outlook", "Teams2", "com.contoso.app"])
        switch processKind {
        case 0: line += gap() + "[\(name)[\(rng.below(9999))]]"
        case 1: line += gap() + "[\(name)[\(rng.below(9999)):\(rng.below(99999))]]"
        case 2: line += gap() + "\(name)[\(rng.below(9999)):\(rng.below(99999))]"
        case 3 where sawLevel: line += gap() + "[\(name)]"
        default: break
        }
        if let levelText { line += gap() + levelText }
        var component: String?
        switch rng.below(5) {
        case 0, 1:
            component = pick(["MAMPolicyManager", "PolicyManager", "Enrollment", "Policy[v2]", "a b", "x:y", "[inner]"])
            line += gap() + "[\(component!)]"
        case 2 where sawLevel:
            component = pick(["IntuneMAM", "MSAL.iOS", "net_http", "a-b"])
            line += gap() + component! + ":"
        default: break
        }
        var message = ""
        if !chance(3) {
            message = ([pick(Self.firstWords)] + (0..<rng.below(8)).map { _ in pick(Self.words) }).joined(separator: " ")
            line += gap() + message
        }
        return (line, ms, level, component, message)
    }

    /// A document of `entries` entries (a few junk lines may come first).
    mutating func document(entries count: Int) -> Document {
        var lines: [String] = []
        var expected: [TextExportReference.Entry] = []
        for _ in 0..<(chance(30) ? rng.below(3) + 1 : 0) {
            let text = pick(Self.junk)
            lines.append(text)
            expected.append(.init(line: lines.count, time: nil, level: .info, component: nil, message: text))
        }
        if chance(20) { lines.append("") }
        for _ in 0..<count {
            let (line, ms, level, component, message) = entryLine()
            lines.append(line)
            var entry = TextExportReference.Entry(line: lines.count, time: ms, level: level, component: component, message: message)
            var body: [String] = []
            for _ in 0..<(chance(35) ? rng.below(5) + 1 : 0) {
                body.append(chance(15) ? pick(["", "   ", "\t"]) : pick(Self.continuations))
            }
            lines += body
            // Blank lines at the entry's end are not part of it.
            while let last = body.last, last.allSatisfy(\.isWhitespace) { body.removeLast() }
            if !body.isEmpty { entry.message += "\n" + body.joined(separator: "\n") }
            expected.append(entry)
        }
        let text = lines.map { $0 + (chance(10) ? "\r" : "") }.joined(separator: "\n") + (chance(50) ? "\n" : "")
        return Document(text: text, expected: expected)
    }
}

extension Timestamp {
    /// Days since 1970-01-01 of a civil date, for the generator's expected times.
    static func daysFromCivilForTests(year: Int, month: Int, day: Int) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: 0)!
        let date = calendar.date(from: DateComponents(year: year, month: month, day: day))!
        return Int(date.timeIntervalSince1970 / 86_400)
    }
}
