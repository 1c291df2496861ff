/// JSON string contents for readers outside the scanner (the redactor, which must measure
/// and digest a string exactly as the ingest path decoded it, so a verbose message withheld
/// in a query answer and the same message withheld in the journal carry the same digest).
public enum JSONText {
    /// The text of a JSON string's raw contents (without the quotes), escapes resolved
    /// (`\n`, `\uD83D\uDE00`, ...) by the same code the ingest scanner uses.
    public static func unescape(_ raw: String) -> String {
        guard raw.utf8.contains(0x5C) else { return raw }
        var bytes = Array(raw.utf8)
        return bytes.withUnsafeMutableBufferPointer { String(decoding: JSONStringToken.decode(UnsafeBufferPointer($0)), as: UTF8.self) }
    }
}
