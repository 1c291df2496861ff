/// The first line of an entry of a diagnostic-console text export, in the shape the SDK's
/// consoles and Apple's unified log write:
///
///     <timestamp> [<process[pid]>] <level> [<component>] message
///
///     2026-11-26T15:58:11Z [ComMail[512]] WARNING [MAMPolicyManager] No policy cached
///     2026-11-21T10:15:30.123Z [WARNING] [PolicyManager] Policy check-in failed
///     2026-11-21 10:15:30.123 INFO IntuneMAM: enrollment started
///     2026-11-21 10:15:30.123456+0000 MyApp[412:9921] <Error> [Enrollment] token expired
///
/// A line starts an entry when it begins with a timestamp (`T`, `t` or a space between date
/// and time; a fraction after `.` or `,`, any number of digits, read to the millisecond; a
/// zone `Z`, `±HH`, `±HHMM` or `±HH:MM`, none meaning UTC) followed by white space or the
/// line's end, and the timestamp is a real instant (`Timestamp.parse` reads it) in years
/// 0001-9999 (`Timestamp.acceptedRange`). Then, each optional, separated by spaces or tabs:
///
/// - a process: `[name[pid]]` or `[name[pid:tid]]`, bare `name[pid:tid]` (Apple), or
///   `[name]` when a level follows it;
/// - a level: a word `LogLevel(name:)` knows, bare (two letters or more, optionally followed
///   by `:`), in brackets `[W]` or angle brackets `<Error>` (also Apple's `<Default>` as info
///   and `<Fault>` as error);
/// - a component: a bracketed group (brackets inside it balanced: `[Policy[v2]]`) or, after
///   a level, a word of letters, digits, `.`, `_`, `-` followed by `:` (`IntuneMAM:`).
///
/// The rest is the message. Each part is recognised only where it is followed by white space
/// or the line's end, so a message word is never mistaken for one. Lines that do not start an
/// entry are read by `TextExport` (continuations, or text before the first entry).
public enum TextLogLine {
    public struct Header: Sendable, Hashable {
        public var time: Int64
        public var level: LogLevel
        public var component: String?
        public var message: String
    }

    /// The entry a line starts, or nil when it starts none.
    public static func header(_ line: Substring) -> Header? {
        // Most continuation lines fail here, before their bytes are copied.
        guard line.utf8.count >= 19, let first = line.utf8.first, isDigit(first) else { return nil }
        let b = Array(line.utf8)
        guard let (time, afterTime) = timestamp(b) else { return nil }
        var i = afterTime
        skipBlanks(b, &i)
        if let end = process(b, i) {
            i = end
            skipBlanks(b, &i)
        }
        var level = LogLevel.info
        var sawLevel = false
        if let (l, end) = levelToken(b, i) {
            level = l
            sawLevel = true
            i = end
            skipBlanks(b, &i)
        }
        var component: String?
        if let end = bracketGroup(b, i), endsToken(b, end) {
            component = text(b, i + 1..<end - 1)
            i = end
            skipBlanks(b, &i)
        } else if sawLevel, let end = namedComponent(b, i) {
            component = text(b, i..<end - 1)
            i = end
            skipBlanks(b, &i)
        }
        if component?.isEmpty == true { component = nil }
        return Header(time: time, level: level, component: component, message: text(b, i..<b.count))
    }

    /// The leading timestamp's time and where it ends.
    static func timestamp(_ b: [UInt8]) -> (Int64, Int)? {
        func digits(_ range: Range<Int>) -> Bool { range.upperBound <= b.count && b[range].allSatisfy(isDigit) }
        guard digits(0..<4), b.count >= 19, b[4] == UInt8(ascii: "-"), digits(5..<7), b[7] == UInt8(ascii: "-"), digits(8..<10),
            [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(b[10]), digits(11..<13), b[13] == UInt8(ascii: ":"),
            digits(14..<16), b[16] == UInt8(ascii: ":"), digits(17..<19)
        else { return nil }
        var end = 19
        if end < b.count, b[end] == UInt8(ascii: ".") || b[end] == UInt8(ascii: ","), end + 1 < b.count, isDigit(b[end + 1]) {
            end += 1
            while end < b.count, isDigit(b[end]) { end += 1 }
        }
        if end < b.count, b[end] == UInt8(ascii: "Z") || b[end] == UInt8(ascii: "z") {
            end += 1
        } else if end < b.count, b[end] == UInt8(ascii: "+") || b[end] == UInt8(ascii: "-"), digits(end + 1..<end + 3) {
            end += 3
            if digits(end..<end + 2) {
                end += 2
            } else if end < b.count, b[end] == UInt8(ascii: ":"), digits(end + 1..<end + 3) {
                end += 3
            }
        }
        guard endsToken(b, end) else { return nil }
        guard let ms = b[0..<end].withUnsafeBufferPointer({ Timestamp.parse(bytes: $0) }), Timestamp.acceptedRange.contains(ms)
        else { return nil }
        return (ms, end)
    }

    /// A process marker at `i`: where it ends.
    static func process(_ b: [UInt8], _ i: Int) -> Int? {
        guard i < b.count else { return nil }
        if b[i] == UInt8(ascii: "[") {
            // `[name[pid]]`
            var j = i + 1
            while j < b.count, b[j] != UInt8(ascii: "["), b[j] != UInt8(ascii: "]") { j += 1 }
            if j > i + 1, let afterPID = pid(b, j), afterPID < b.count, b[afterPID] == UInt8(ascii: "]"), endsToken(b, afterPID + 1) {
                return afterPID + 1
            }
            // `[name]` followed by a level
            if let end = bracketGroup(b, i), end - i > 2, endsToken(b, end), levelToken(b, i) == nil,
                !b[i + 1..<end - 1].contains(UInt8(ascii: "["))
            {
                var k = end
                skipBlanks(b, &k)
                if levelToken(b, k) != nil { return end }
            }
            return nil
        }
        // `name[pid:tid]`
        var j = i
        while j < b.count, !isBlank(b[j]), b[j] != UInt8(ascii: "["), b[j] != UInt8(ascii: "]"), b[j] != UInt8(ascii: "<") { j += 1 }
        guard j > i, let end = pid(b, j, thread: true), endsToken(b, end) else { return nil }
        return end
    }

    /// `[digits]` or `[digits:digits]` at `i` (the second form only, when `thread`): where it ends.
    static func pid(_ b: [UInt8], _ i: Int, thread: Bool = false) -> Int? {
        guard i < b.count, b[i] == UInt8(ascii: "[") else { return nil }
        var j = i + 1
        let start = j
        while j < b.count, isDigit(b[j]) { j += 1 }
        guard j > start else { return nil }
        if j < b.count, b[j] == UInt8(ascii: ":") {
            j += 1
            let tid = j
            while j < b.count, isDigit(b[j]) { j += 1 }
            guard j > tid else { return nil }
        } else if thread {
            return nil
        }
        guard j < b.count, b[j] == UInt8(ascii: "]") else { return nil }
        return j + 1
    }

    /// A level at `i`, bare, bracketed or in angle brackets, and where it ends.
    static func levelToken(_ b: [UInt8], _ i: Int) -> (LogLevel, Int)? {
        guard i < b.count else { return nil }
        func word(from start: Int) -> Int {
            var j = start
            while j < b.count, isLetter(b[j]) { j += 1 }
            return j
        }
        let open = b[i]
        if open == UInt8(ascii: "[") || open == UInt8(ascii: "<") {
            let close = open == UInt8(ascii: "[") ? UInt8(ascii: "]") : UInt8(ascii: ">")
            let end = word(from: i + 1)
            guard end > i + 1, end < b.count, b[end] == close, endsToken(b, end + 1) else { return nil }
            let name = text(b, i + 1..<end)
            var level = LogLevel(name: name)
            if level == nil, open == UInt8(ascii: "<") {
                switch name.lowercased() {
                case "default": level = .info
                case "fault": level = .error
                default: break
                }
            }
            return level.map { ($0, end + 1) }
        }
        let end = word(from: i)
        guard end - i >= 2, let level = LogLevel(name: text(b, i..<end)) else { return nil }
        if endsToken(b, end) { return (level, end) }
        if b[end] == UInt8(ascii: ":"), endsToken(b, end + 1) { return (level, end + 1) }
        return nil
    }

    /// A bracketed group at `i` with every bracket inside it balanced: where it ends.
    static func bracketGroup(_ b: [UInt8], _ i: Int) -> Int? {
        guard i < b.count, b[i] == UInt8(ascii: "[") else { return nil }
        var depth = 0
        var j = i
        while j < b.count {
            if b[j] == UInt8(ascii: "[") { depth += 1 }
            if b[j] == UInt8(ascii: "]") {
                depth -= 1
                if depth == 0 { return j + 1 }
            }
            j += 1
        }
        return nil
    }

    /// `Word:` at `i`, followed by white space or the end: where it ends (after the colon).
    static func namedComponent(_ b: [UInt8], _ i: Int) -> Int? {
        var j = i
        while j < b.count, isLetter(b[j]) || isDigit(b[j]) || [UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-")].contains(b[j]) {
            j += 1
        }
        guard j > i, j < b.count, b[j] == UInt8(ascii: ":"), endsToken(b, j + 1) else { return nil }
        return j + 1
    }

    static func endsToken(_ b: [UInt8], _ i: Int) -> Bool { i == b.count || (i < b.count && isBlank(b[i])) }
    static func skipBlanks(_ b: [UInt8], _ i: inout Int) { while i < b.count, isBlank(b[i]) { i += 1 } }
    static func isBlank(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 }
    static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    static func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7A }
    static func text(_ b: [UInt8], _ range: Range<Int>) -> String { String(decoding: b[range], as: UTF8.self) }
}
