/// The numbers the daemon reads out of a record and acts on (indexes, sums, sorts, prints),
/// each with its declared type and range. Ingest refuses a line whose value is of the wrong
/// type or outside its range, naming the field and the range, so nothing downstream ever meets
/// a value its arithmetic was not written for. The decoders read their bounds from this one
/// table; README ("Canonical records") prints it.
///
/// A number the daemon only stores (any other member) is kept as sent, provided it is a
/// finite double (see ``CanonicalJSON``).
public struct InterpretedField: Sendable, Hashable {
    public enum Bounds: Sendable, Hashable {
        /// A whole number: JSON integers, or numbers with an integral value (`2e2`).
        case integer(ClosedRange<Int64>)
        /// Any finite double in the range.
        case number(ClosedRange<Double>)
    }

    /// The member's name as records spell it.
    public let name: String
    public let bounds: Bounds
    /// What the range stands for, quoted in refusals.
    public let meaning: String

    /// `statusCode`: IntuneMAMEnrollmentStatus codes are three-digit numbers; Int32 keeps any
    /// code a future SDK could add (unknown codes are stored and shown as numbers) while
    /// refusing values no SDK sends, whose arithmetic could overflow downstream.
    public static let statusCode = InterpretedField(
        name: "statusCode", bounds: .integer(Int64(Int32.min)...Int64(Int32.max)), meaning: "a 32-bit enrollment status code")

    /// `durationMs`: a call's duration in milliseconds. The SDK retries failed enrollments
    /// every 24 h, so a call lasting longer than 7 days is a broken clock, not a measurement;
    /// the bound also keeps any sum of a year's durations far from a double's precision limit.
    public static let durationMs = InterpretedField(
        name: "durationMs", bounds: .number(0...604_800_000), meaning: "milliseconds, 0 to 7 days")

    /// `time`: epoch milliseconds of years 0001 to 9999, what RFC 3339 can print.
    public static let time = InterpretedField(
        name: "time", bounds: .integer(Timestamp.acceptedRange), meaning: "epoch milliseconds of the years 0001 to 9999")

    /// OTLP `severityNumber`: the 24 levels of the OpenTelemetry log data model (0 = unset).
    public static let severityNumber = InterpretedField(
        name: "severityNumber", bounds: .integer(0...24), meaning: "an OpenTelemetry severity number (0 unset, 1-24)")

    /// OTLP `timeUnixNano` and `observedTimeUnixNano`: nanoseconds since 1970 that fit a signed
    /// 64-bit count (up to 2262-04-11), the range every OpenTelemetry SDK clock produces.
    public static let timeUnixNano = InterpretedField(
        name: "timeUnixNano", bounds: .integer(0...Int64.max), meaning: "nanoseconds since 1970, up to 2262-04-11")

    /// Every row, in the order README lists them.
    public static let all: [InterpretedField] = [statusCode, durationMs, time, severityNumber, timeUnixNano]

    public func contains(_ value: Int64) -> Bool {
        switch bounds {
        case .integer(let range): range.contains(value)
        case .number(let range): range.contains(Double(value))
        }
    }

    public func contains(_ value: Double) -> Bool {
        guard value.isFinite else { return false }
        switch bounds {
        case .integer(let range):
            // Through Int64, not by comparing doubles: Double(Int64.max) is 2^63, past it.
            guard let whole = Int64(exactly: value.rounded(.towardZero)) else { return false }
            return range.contains(whole)
        case .number(let range): return range.contains(value)
        }
    }

    /// The range as refusals print it: `-2147483648...2147483647`, `0...604800000`.
    public var rangeText: String {
        switch bounds {
        case .integer(let range): "\(range.lowerBound)...\(range.upperBound)"
        case .number(let range): "\(Self.plain(range.lowerBound))...\(Self.plain(range.upperBound))"
        }
    }

    /// The refusal of a value outside the range; `path` names the member (`data.durationMs`).
    public func outOfRange(_ value: String, path: String) -> String {
        "\(path): \(Self.clip(value)) is outside the accepted range \(rangeText) (\(meaning))"
    }

    /// The refusal of a value of the wrong type.
    public func wrongType(path: String) -> String {
        switch bounds {
        case .integer: "\(path): expected an integer (\(meaning))"
        case .number: "\(path): expected a number (\(meaning))"
        }
    }

    static func plain(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : "\(d)"
    }

    /// A client's value quoted in a refusal, cut so a 60,000-digit number does not become the answer.
    static func clip(_ text: String) -> String {
        text.utf8.count <= 40 ? text : String(text.prefix(40)) + "…"
    }
}
