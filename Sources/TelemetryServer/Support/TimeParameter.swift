import TelemetryModel

/// A time given as a query parameter: RFC 3339, epoch milliseconds, or relative to now like
/// `-15m`; anything else is a 400 naming the parameter and the forms it takes.
enum TimeParameter {
    static func parse(_ name: String, _ text: String, now: Int64) throws -> Int64 {
        guard let t = TimeExpression.parse(text, now: now) else {
            throw APIError.badRequest(
                "invalid_parameter", "\(name) '\(text)' is not RFC 3339, epoch milliseconds, or relative like -15m, -2h, -7d")
        }
        return t
    }
}
