/// A diagnostic-console text export read as entries. An entry is a line that starts one
/// (`TextLogLine`: a leading timestamp) and every line after it that does not: stack traces,
/// a pasted HTTP response, a message with newlines. Those continuation lines belong to the
/// entry: one record, with its time, level and component, its message the lines joined by
/// newlines as written (a verbose entry stays verbose to its last line, so what it may carry
/// is withheld like the rest of it). Blank lines (only spaces and tabs) inside an entry are
/// kept; blank lines at its end are not. Lines end at `\n`; one `\r` before it is dropped.
///
/// Lines before the first entry have no entry to join: each is kept as its own `info`
/// record with its raw text and no time (never dropped).
///
/// Size: a line longer than `maxEntryBytes` (as UTF-8, after invalid bytes are replaced) is
/// refused on its own, named by its line number; nothing else is lost. An entry is at most
/// `maxEntryBytes` of message: a longer one is stored as consecutive records cut at line
/// ends, each with the entry's time, level and component (each part's `line` is where it
/// starts; blank lines at a cut are dropped).
public enum TextExport {
    public struct Entry: Sendable, Hashable {
        /// The 1-based line the entry (or this part of it) starts on.
        public var line: Int
        /// nil for text before the first entry: the receive time stands in.
        public var time: Int64?
        public var level: LogLevel
        public var component: String?
        public var message: String
    }

    public static func entries(_ body: [UInt8], maxEntryBytes: Int) -> (entries: [Entry], rejected: [LineError]) {
        var entries: [Entry] = []
        var rejected: [LineError] = []
        var current: Entry?
        var blanks: [String] = []
        var lineNo = 0
        for raw in body.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNo += 1
            let text = String(decoding: raw.last == 0x0D ? raw.dropLast() : raw[...], as: UTF8.self)
            if text.utf8.count > maxEntryBytes {
                rejected.append(LineError(line: lineNo, error: "line is longer than the limit maxLineBytes=\(maxEntryBytes)"))
                continue
            }
            if let header = TextLogLine.header(text[...]) {
                if let done = current { entries.append(done) }
                current = Entry(
                    line: lineNo, time: header.time, level: header.level, component: header.component, message: header.message)
                blanks = []
            } else if text.utf8.allSatisfy(TextLogLine.isBlank) {
                if current != nil { blanks.append(text) }
            } else if var entry = current {
                // Released first, so the message is grown in place rather than copied per line.
                current = nil
                let added = blanks.isEmpty ? text : (blanks + [text]).joined(separator: "\n")
                if entry.message.utf8.count + 1 + added.utf8.count > maxEntryBytes {
                    entries.append(entry)
                    entry.line = lineNo
                    entry.message = text
                } else {
                    entry.message += "\n" + added
                }
                current = entry
                blanks = []
            } else {
                entries.append(Entry(line: lineNo, time: nil, level: .info, component: nil, message: text))
            }
        }
        if let done = current { entries.append(done) }
        return (entries, rejected)
    }
}
