import TelemetryModel

/// The `env` query parameter: `prod` or `ppe` in any case; anything else is a 400 naming the
/// value and the two it may be.
enum EnvironmentParameter {
    static func parse(_ text: String) throws -> TelemetryEnvironment {
        guard let env = TelemetryEnvironment(rawValue: text.lowercased()) else {
            throw APIError.badRequest("invalid_parameter", "env must be prod or ppe, not '\(text)'")
        }
        return env
    }
}
