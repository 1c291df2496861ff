import TelemetryModel

/// A second reading of console-export text, written apart from the product's byte scanner
/// (`TextLogLine`, `TextExport`) and kept obviously right rather than fast: each part of an
/// entry's first line is an anchored regular expression over Unicode scalars, tried one after
/// another; level names come from its own table; times are counted day by day. It reads the
/// same documented rules, so the two can be compared record by record, on generated exports
/// (`TextExportTests`) and on whatever libFuzzer makes (`FuzzTextLog`).
public enum TextExportReference {
    public struct Entry: Hashable, Sendable, CustomStringConvertible {
        public var line: Int
        public var time: Int64?
        public var level: LogLevel
        public var component: String?
        public var message: String

        public init(line: Int, time: Int64?, level: LogLevel, component: String?, message: String) {
            self.line = line
            self.time = time
            self.level = level
            self.component = component
            self.message = message
        }

        public var description: String {
            "line \(line) \(time.map(String.init) ?? "-") \(level.name) [\(component ?? "")] \(message.debugDescription)"
        }
    }

    public struct Header: Hashable, Sendable {
        public var time: Int64
        public var level: LogLevel
        public var component: String?
        public var message: String
    }

    /// Every entry of an export and the lines refused as too long: continuation lines joined
    /// to their entry, trailing blank lines dropped, text before the first entry kept line by
    /// line, entries longer than `maxEntryBytes` cut at line ends.
    public static func entries(_ body: [UInt8], maxEntryBytes: Int) -> (entries: [Entry], rejectedLines: [Int]) {
        var out: [Entry] = []
        var rejected: [Int] = []
        var open: Entry?
        var pendingBlank: [String] = []
        var lines: [[UInt8]] = [[]]
        for byte in body {
            if byte == 0x0A { lines.append([]) } else { lines[lines.count - 1].append(byte) }
        }
        for (index, var bytes) in lines.enumerated() {
            if bytes.last == 0x0D { bytes.removeLast() }
            let line = String(decoding: bytes, as: UTF8.self)
            if line.utf8.count > maxEntryBytes {
                rejected.append(index + 1)
                continue
            }
            if let h = header(line) {
                if let e = open { out.append(e) }
                open = Entry(line: index + 1, time: h.time, level: h.level, component: h.component, message: h.message)
                pendingBlank = []
            } else if line.wholeMatch(of: blank) != nil {
                if open != nil { pendingBlank.append(line) }
            } else if var e = open {
                let joined = ([e.message] + pendingBlank + [line]).joined(separator: "\n")
                if joined.utf8.count > maxEntryBytes {
                    out.append(e)
                    e.line = index + 1
                    e.message = line
                } else {
                    e.message = joined
                }
                open = e
                pendingBlank = []
            } else {
                out.append(Entry(line: index + 1, time: nil, level: .info, component: nil, message: line))
            }
        }
        if let e = open { out.append(e) }
        return (out, rejected)
    }

    /// The entry a line starts, or nil: timestamp, then process, level and component, each
    /// optional, then the message.
    public static func header(_ line: String) -> Header? {
        var rest = Substring(line)
        guard let t = rest.prefixMatch(of: timestamp), let time = instant(t.output) else { return nil }
        rest = dropBlanks(rest, from: t.range.upperBound)
        if let end = processEnd(rest) { rest = dropBlanks(rest, from: end) }
        var level = LogLevel.info
        var sawLevel = false
        if let (l, end) = levelToken(rest) {
            level = l
            sawLevel = true
            rest = dropBlanks(rest, from: end)
        }
        var component: String?
        if let (inner, end) = bracketGroup(rest) {
            component = inner.isEmpty ? nil : inner
            rest = dropBlanks(rest, from: end)
        } else if sawLevel, let c = rest.prefixMatch(of: namedComponent) {
            component = String(c.output.1)
            rest = dropBlanks(rest, from: c.range.upperBound)
        }
        return Header(time: time, level: level, component: component, message: String(rest))
    }

    // MARK: - The parts

    /// A token ends at a space, a tab or the line's end.
    static let tokenEnd = #"(?=[ \t]|\z)"#
    nonisolated(unsafe) static let blank = try! Regex(#"[ \t]*"#).matchingSemantics(.unicodeScalar)
    nonisolated(unsafe) static let timestamp = try! Regex(
        #"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:[.,]([0-9]+))?([Zz]|[+-][0-9]{2}(?::?[0-9]{2})?)?"#
            + tokenEnd, as: (Substring, Substring, Substring, Substring, Substring, Substring, Substring, Substring?, Substring?).self
    ).matchingSemantics(.unicodeScalar)
    nonisolated(unsafe) static let bracketedWord = try! Regex(#"\[([A-Za-z]+)\]"# + tokenEnd, as: (Substring, Substring).self)
        .matchingSemantics(.unicodeScalar)
    nonisolated(unsafe) static let angledWord = try! Regex(#"<([A-Za-z]+)>"# + tokenEnd, as: (Substring, Substring).self)
        .matchingSemantics(.unicodeScalar)
    nonisolated(unsafe) static let bareWord = try! Regex(#"([A-Za-z]{2,}):?"# + tokenEnd, as: (Substring, Substring).self)
        .matchingSemantics(.unicodeScalar)
    nonisolated(unsafe) static let processWithPID = try! Regex(#"\[[^\[\]]+\[[0-9]+(?::[0-9]+)?\]\]"# + tokenEnd)
        .matchingSemantics(.unicodeScalar)
    nonisolated(unsafe) static let appleProcess = try! Regex(#"[^ \t\[\]<]+\[[0-9]+:[0-9]+\]"# + tokenEnd)
        .matchingSemantics(.unicodeScalar)
    nonisolated(unsafe) static let plainBracket = try! Regex(#"\[[^\[\]]+\]"# + tokenEnd).matchingSemantics(.unicodeScalar)
    nonisolated(unsafe) static let namedComponent = try! Regex(#"([A-Za-z0-9._-]+):"# + tokenEnd, as: (Substring, Substring).self)
        .matchingSemantics(.unicodeScalar)

    /// `s` from `start` on, without the spaces and tabs there. By scalar: slicing by
    /// `Character` would round an index inside a cluster (a space before a combining mark).
    static func dropBlanks(_ s: Substring, from start: String.Index? = nil) -> Substring {
        let scalars = s.unicodeScalars[(start ?? s.startIndex)...]
        return Substring(scalars.drop { $0 == " " || $0 == "\t" })
    }

    /// Level names as exports write them (ASCII letters, any case).
    static let levelNames: [String: LogLevel] = [
        "verbose": .verbose, "debug": .verbose, "trace": .verbose,
        "info": .info, "information": .info, "notice": .info,
        "warning": .warning, "warn": .warning,
        "error": .error, "err": .error, "fatal": .error, "critical": .error,
    ]
    /// One letter, only in brackets or angle brackets (`[W]`, `<e>`).
    static let levelLetters: [String: LogLevel] = ["v": .verbose, "d": .verbose, "i": .info, "w": .warning, "e": .error, "f": .error]
    /// Apple's unified-log words, only in angle brackets.
    static let appleLevels: [String: LogLevel] = ["default": .info, "fault": .error]

    static func asciiLowercased(_ s: Substring) -> String {
        String(String.UnicodeScalarView(s.unicodeScalars.map { ("A"..."Z").contains($0) ? Unicode.Scalar($0.value + 32)! : $0 }))
    }

    /// A level at the start of `s`, and where it ends.
    static func levelToken(_ s: Substring) -> (LogLevel, Substring.Index)? {
        if let m = s.prefixMatch(of: bracketedWord) {
            let word = asciiLowercased(m.output.1)
            return (levelNames[word] ?? levelLetters[word]).map { ($0, m.range.upperBound) }
        }
        if let m = s.prefixMatch(of: angledWord) {
            let word = asciiLowercased(m.output.1)
            return (levelNames[word] ?? levelLetters[word] ?? appleLevels[word]).map { ($0, m.range.upperBound) }
        }
        if let m = s.prefixMatch(of: bareWord) {
            return levelNames[asciiLowercased(m.output.1)].map { ($0, m.range.upperBound) }
        }
        return nil
    }

    /// Where a process marker at the start of `s` ends: `[name[pid]]`, `[name[pid:tid]]`,
    /// Apple's `name[pid:tid]`, or `[name]` when a level comes next (and `[name]` is not
    /// itself a level).
    static func processEnd(_ s: Substring) -> Substring.Index? {
        if let m = s.prefixMatch(of: processWithPID) { return m.range.upperBound }
        if let m = s.prefixMatch(of: appleProcess) { return m.range.upperBound }
        if let m = s.prefixMatch(of: plainBracket), levelToken(s) == nil, levelToken(dropBlanks(s, from: m.range.upperBound)) != nil {
            return m.range.upperBound
        }
        return nil
    }

    /// A bracketed group at the start of `s` whose brackets balance, followed by a blank or
    /// the end: its inside and where it ends.
    static func bracketGroup(_ s: Substring) -> (String, Substring.Index)? {
        let scalars = s.unicodeScalars
        guard scalars.first == "[" else { return nil }
        var depth = 0
        for index in scalars.indices {
            switch scalars[index] {
            case "[": depth += 1
            case "]": depth -= 1
            default: continue
            }
            guard depth == 0 else { continue }
            let end = scalars.index(after: index)
            guard end == scalars.endIndex || scalars[end] == " " || scalars[end] == "\t" else { return nil }
            return (String(Substring(scalars[scalars.index(after: scalars.startIndex)..<index])), end)
        }
        return nil
    }

    // MARK: - Time

    typealias TimestampMatch = (Substring, Substring, Substring, Substring, Substring, Substring, Substring, Substring?, Substring?)

    /// Epoch milliseconds of a matched timestamp, or nil when it names no real instant: the
    /// date must exist, hours 00-23, minutes 00-59, seconds 00-60 (a leap second counts into
    /// the next minute), a zone within ±18:00 with minutes 00-59, and the instant in years
    /// 0001-9999.
    static func instant(_ t: TimestampMatch) -> Int64? {
        let (year, month, day) = (Int(t.1)!, Int(t.2)!, Int(t.3)!)
        let (hour, minute, second) = (Int(t.4)!, Int(t.5)!, Int(t.6)!)
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var offsetMinutes = 0
        if let zone = t.8, zone != "Z", zone != "z" {
            let digits = zone.unicodeScalars.filter { ("0"..."9").contains($0) }.map { Int($0.value) - 48 }
            let hours = digits[0] * 10 + digits[1]
            let minutes = digits.count == 4 ? digits[2] * 10 + digits[3] : 0
            guard minutes <= 59, hours * 60 + minutes <= 18 * 60 else { return nil }
            offsetMinutes = (zone.hasPrefix("-") ? -1 : 1) * (hours * 60 + minutes)
        }
        var millis = 0
        if let fraction = t.7 {
            let digits = Array(fraction.unicodeScalars.prefix(3)).map { Int($0.value) - 48 }
            millis = (digits + [0, 0]).prefix(3).reduce(0) { $0 * 10 + $1 }
        }
        let days = Int64(daysFromEpoch(year: year, month: month, day: day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        let ms = seconds * 1000 + Int64(millis)
        return years1To9999.contains(ms) ? ms : nil
    }

    static let years1To9999 =
        Int64(daysFromEpoch(year: 1, month: 1, day: 1)) * 86_400_000...Int64(daysFromEpoch(year: 10_000, month: 1, day: 1)) * 86_400_000 - 1

    static func isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int, year: Int) -> Int {
        [31, isLeap(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    }

    /// Days from 1970-01-01, counted year by year and month by month.
    static func daysFromEpoch(year: Int, month: Int, day: Int) -> Int {
        var days = 0
        if year >= 1970 {
            for y in 1970..<year { days += isLeap(y) ? 366 : 365 }
        } else {
            for y in year..<1970 { days -= isLeap(y) ? 366 : 365 }
        }
        for m in 1..<month { days += daysIn(month: m, year: year) }
        return days + day - 1
    }
}
