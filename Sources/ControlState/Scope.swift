/// What a bearer token may do. `admin` implies every other scope.
public enum Scope: String, Sendable, Hashable, CaseIterable, Codable {
    case ingest, read, bundle, pii, admin
}
