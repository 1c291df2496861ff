/// A token as the daemon knows it: never the secret, only its SHA-256.
public struct Token: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    public var scopes: Set<Scope>
    /// The app ids the token is bound to (empty: every app): an ingest token posts only
    /// for them, a read token reads only their records. `admin` is never bound.
    public var apps: [String]
    public var createdAt: Int64
    public var revoked: Bool

    public init(id: String, name: String, scopes: Set<Scope>, apps: [String], createdAt: Int64, revoked: Bool) {
        self.id = id
        self.name = name
        self.scopes = scopes
        self.apps = apps
        self.createdAt = createdAt
        self.revoked = revoked
    }

    public func allows(_ scope: Scope) -> Bool { !revoked && (scopes.contains(scope) || scopes.contains(.admin)) }

    /// The apps whose data the token may read; nil when it may read every app.
    public var readableApps: Set<String>? {
        apps.isEmpty || scopes.contains(.admin) ? nil : Set(apps)
    }

    /// App ids compare byte for byte: no case folding or Unicode equivalence, so a bound
    /// token can only ever store records under exactly the ids it was given.
    public func mayPost(forApp appId: String) -> Bool {
        apps.isEmpty || scopes.contains(.admin) || apps.contains { $0.utf8.elementsEqual(appId.utf8) }
    }
}
