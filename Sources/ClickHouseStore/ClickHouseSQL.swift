/// A ClickHouse statement whose values can only enter as typed, bound values: the one way
/// this backend builds SQL. The literal parts of the string are written by us in the source;
/// every interpolated value is a ``ClickHouseValue`` and is rendered by the binder, either as
/// a fully escaped literal or as a server-side parameter (`{p0:String}` + `param_p0=`).
/// There is no initialiser that takes a runtime `String` as SQL text, so a value cannot be
/// concatenated into a statement by mistake.
///
///     let q: ClickHouseSQL = "SELECT raw FROM \(identifier: db).records WHERE app = \(app) AND time >= \(since)"
///
/// Identifiers (database and table names from configuration) go through
/// `\(identifier:)`, which accepts only `[A-Za-z_][A-Za-z0-9_]*`; a fragment built the same
/// way is spliced with `\(fragment:)`.
public struct ClickHouseSQL: Sendable, Hashable, ExpressibleByStringInterpolation {
    /// A piece of a statement: trusted text written in our source, or a bound value.
    public enum Part: Sendable, Hashable {
        case text(String)
        case value(ClickHouseValue)
    }

    public private(set) var parts: [Part]

    public init(stringLiteral value: StaticString) {
        parts = [.text(value.description)]
    }

    public init(stringInterpolation: StringInterpolation) {
        parts = stringInterpolation.parts
    }

    public struct StringInterpolation: StringInterpolationProtocol {
        var parts: [Part] = []

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: StaticString) {
            parts.append(.text(literal.description))
        }

        public mutating func appendInterpolation(_ value: ClickHouseValue) { parts.append(.value(value)) }
        public mutating func appendInterpolation(_ value: String) { parts.append(.value(.string(value))) }
        public mutating func appendInterpolation(_ value: Int64) { parts.append(.value(.int(value))) }
        public mutating func appendInterpolation(_ value: Int) { parts.append(.value(.int(Int64(value)))) }
        public mutating func appendInterpolation(_ value: UInt64) { parts.append(.value(.uint(value))) }
        public mutating func appendInterpolation(_ value: Double) { parts.append(.value(.float(value))) }
        public mutating func appendInterpolation(_ value: [String]) { parts.append(.value(.stringArray(value))) }

        /// A database, table or column name from configuration; anything but a plain
        /// identifier traps, since it would be a programming or validation error upstream
        /// (configuration checks names with ``ClickHouseIdentifier/isValid(_:)``).
        public mutating func appendInterpolation(identifier: String) {
            precondition(ClickHouseIdentifier.isValid(identifier), "not a ClickHouse identifier: \(identifier)")
            parts.append(.text(identifier))
        }

        /// An integer written into the statement as text in both renderings, for the places
        /// ClickHouse takes no parameter (the `PARTITION` expression of an `ALTER`). The
        /// decimal text of an integer cannot change what a statement means.
        public mutating func appendInterpolation(literal value: Int64) {
            parts.append(.text(String(value)))
        }

        /// Another statement built the same way (a WHERE clause assembled from filters).
        public mutating func appendInterpolation(fragment: ClickHouseSQL) {
            parts.append(contentsOf: fragment.parts)
        }
    }

    /// Joins fragments with a separator written in our source (`" AND "`).
    public static func joined(_ fragments: [ClickHouseSQL], separator: StaticString) -> ClickHouseSQL {
        var out = ClickHouseSQL(parts: [])
        for (n, f) in fragments.enumerated() {
            if n > 0 { out.parts.append(.text(separator.description)) }
            out.parts.append(contentsOf: f.parts)
        }
        return out
    }

    private init(parts: [Part]) { self.parts = parts }

    /// The statement with every value rendered as a literal: the form 18.16 servers need,
    /// which have no server-side parameters.
    public func inlined() -> String {
        var out = ""
        for part in parts {
            switch part {
            case .text(let t): out += t
            case .value(let v): out += v.literal
            }
        }
        return out
    }

    /// The statement with `{pN:Type}` placeholders and the `param_pN` values to send beside
    /// it (ClickHouse 19.11 and later): values never pass through the SQL parser at all.
    public func parameterized() -> (text: String, parameters: [(name: String, value: String)]) {
        var text = ""
        var parameters: [(String, String)] = []
        for part in parts {
            switch part {
            case .text(let t): text += t
            case .value(let v):
                let name = "p\(parameters.count)"
                text += "{\(name):\(v.typeName)}"
                parameters.append((name, v.parameterText))
            }
        }
        return (text, parameters)
    }
}

/// Names the binder lets into a statement unquoted.
public enum ClickHouseIdentifier {
    public static func isValid(_ name: String) -> Bool {
        guard let first = name.utf8.first, !name.isEmpty, name.utf8.count <= 64 else { return false }
        guard first == UInt8(ascii: "_") || (first | 0x20) >= UInt8(ascii: "a") && (first | 0x20) <= UInt8(ascii: "z") else { return false }
        return name.utf8.allSatisfy { b in
            b == UInt8(ascii: "_") || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"))
                || ((b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z"))
        }
    }
}
