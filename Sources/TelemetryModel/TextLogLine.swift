/// Parses one line of a diagnostic-console text export. Exports differ between SDK versions
/// and platforms, so the parser reads what it can recognise, in order, and leaves the rest
/// as the message:
///
///     2026-11-21T10:15:30.123Z [WARNING] [PolicyManager] Policy check-in failed
///     2026-11-21 10:15:30.123 INFO IntuneMAM: enrollment started
///     2026-11-21 10:15:30.123456+0000 MyApp[412:9921] <Error> [Enrollment] token expired
///
/// A line without a leading timestamp keeps its whole text as an `info` message.
public enum TextLogLine {
    public struct Parsed: Sendable, Hashable {
        public var time: Int64?
        public var level: LogLevel
        public var component: String?
        public var message: String
    }

    public static func parse(_ line: String) -> Parsed {
        var rest = Substring(line)
        guard let (time, afterTime) = leadingTimestamp(rest) else {
            return Parsed(time: nil, level: .info, component: nil, message: line)
        }
        rest = afterTime.drop(while: { $0 == " " || $0 == "\t" })
        // An Apple-style process marker `MyApp[412:9921]` sits between time and level.
        if let token = rest.split(separator: " ", maxSplits: 1).first,
            token.hasSuffix("]"), token.contains("["), !token.hasPrefix("[")
        {
            rest = rest.dropFirst(token.count).drop(while: { $0 == " " })
        }
        var level = LogLevel.info
        var sawLevel = false
        if let token = rest.split(separator: " ", maxSplits: 1).first {
            let bare = token.trimmingCharacters(in: "[]<>:")
            if let l = LogLevel(name: String(bare)), bare.count > 1 || token.count > 1 {
                level = l
                sawLevel = true
                rest = rest.dropFirst(token.count).drop(while: { $0 == " " })
            }
        }
        var component: String?
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            component = String(rest[rest.index(after: rest.startIndex)..<close])
            rest = rest[rest.index(after: close)...].drop(while: { $0 == " " })
        } else if sawLevel, let colon = rest.firstIndex(of: ":"),
            rest[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "_" }),
            !rest[..<colon].isEmpty
        {
            component = String(rest[..<colon])
            rest = rest[rest.index(after: colon)...].drop(while: { $0 == " " })
        }
        return Parsed(time: time, level: level, component: component, message: String(rest))
    }

    /// A leading timestamp: ISO date, `T` or space, time, optional fraction and zone.
    static func leadingTimestamp(_ s: Substring) -> (Int64, Substring)? {
        let chars = Array(s.utf8.prefix(40))
        guard chars.count >= 19 else { return nil }
        // Find where the timestamp ends: date(10) sep(1) time(8), then fraction/zone chars.
        var end = 19
        while end < chars.count {
            let c = chars[end]
            let isFraction = c == UInt8(ascii: ".") || c == UInt8(ascii: ",") || (c >= 48 && c <= 57)
            let isZone = c == UInt8(ascii: "Z") || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") || c == UInt8(ascii: ":")
            if isFraction || isZone { end += 1 } else { break }
        }
        // `+0000` zones (no colon) are normalised for the RFC 3339 parser.
        var candidate = String(decoding: chars[0..<end], as: UTF8.self)
        if let sign = candidate.lastIndex(where: { $0 == "+" || $0 == "-" }),
            candidate.distance(from: candidate.startIndex, to: sign) > 18
        {
            let zone = candidate[candidate.index(after: sign)...]
            if zone.count == 4, zone.allSatisfy(\.isNumber) {
                candidate.insert(":", at: candidate.index(sign, offsetBy: 3))
            }
        }
        guard let ms = Timestamp.parse(candidate) else { return nil }
        let consumed = s.utf8.index(s.utf8.startIndex, offsetBy: end)
        return (ms, s[consumed...])
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        var s = self
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return s
    }
}
