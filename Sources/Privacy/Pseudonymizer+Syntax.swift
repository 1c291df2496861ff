extension Pseudonymizer {
    /// Whether `text` is written as an identity pseudonym: `user-` and 24 lower-case hex
    /// digits, as `identityPseudonym(_:)` makes them. Only the spelling is checked: any such
    /// text may be a pseudonym, and none can be turned back into its identity.
    public static func isIdentityPseudonym(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 29, bytes.starts(with: Array("user-".utf8)) else { return false }
        return bytes.dropFirst(5).allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
        }
    }
}
