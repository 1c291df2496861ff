/// Where a record lives. PPE (pre-production) data is test data from apps that set
/// `MAMTelemetryUsePPE`: it is kept in a store fully separate from production so test
/// traffic never shows up in customer-facing queries, stats or bundles.
public enum TelemetryEnvironment: String, Sendable, Hashable, CaseIterable, Codable {
    case prod
    case ppe
}
