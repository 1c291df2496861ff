/// journald's rules for field names, and the mapping that turns arbitrary keys (swift-log
/// metadata) into names journald keeps.
///
/// journald silently drops a field whose name is not upper-case ASCII letters, digits and
/// `_`, starts with a digit, or is longer than 64 bytes; names starting with `_` are
/// reserved for fields journald adds itself (`_PID`, `_UID`, ...) and are dropped when a
/// client sends them. Mapping keys up front means metadata is never lost that way.
public enum JournalFieldName {
    /// journald's limit on a field name, in bytes.
    public static let maximumLength = 64

    /// Whether journald accepts `name` from a client as it is.
    public static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maximumLength else { return false }
        guard first != UInt8(ascii: "_"), !isDigit(first) else { return false }
        return bytes.allSatisfy { isUpper($0) || isDigit($0) || $0 == UInt8(ascii: "_") }
    }

    /// The field name for a swift-log metadata key: upper-cased, every other character
    /// than `A-Z` and `0-9` replaced by `_`, prefixed with `MAM_` so it cannot collide with
    /// journald's own fields — except `MESSAGE_ID`, which keeps its name because that is
    /// what `journalctl -x` and the catalog look up. Truncated to ``maximumLength``.
    public static func forMetadataKey(_ key: String) -> String {
        var mapped = [UInt8]()
        mapped.reserveCapacity(key.utf8.count + 4)
        for byte in key.utf8 {
            if isUpper(byte) || isDigit(byte) {
                mapped.append(byte)
            } else if byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") {
                mapped.append(byte - 32)
            } else {
                mapped.append(UInt8(ascii: "_"))
            }
        }
        let upper = String(decoding: mapped, as: UTF8.self)
        if upper == "MESSAGE_ID" { return upper }
        return String(("MAM_" + upper).prefix(maximumLength))
    }

    private static func isUpper(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
