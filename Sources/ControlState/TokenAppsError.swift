/// Why a token's app list was refused at creation: each id must be one the daemon can
/// enforce exactly as given.
public enum TokenAppsError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The id at `index` is empty or only white space.
    case empty(index: Int)
    /// The id at `index` holds a comma (app ids are bundle ids, `com.contoso.mail`; a list
    /// is a JSON array, not a comma-joined string).
    case comma(index: Int, id: String)
    /// The id at `index` has white space or control characters at its ends or inside.
    case whitespace(index: Int, id: String)
    /// `admin` reaches every app: a binding would be silently ignored.
    case adminBound

    public var description: String {
        switch self {
        case .empty(let i): "apps[\(i)] is empty; an app id is the app's bundle id, e.g. com.contoso.mail"
        case .comma(let i, let id):
            "apps[\(i)] '\(id)' holds a comma; give each app id as its own element: \"apps\": [\"com.contoso.a\", \"com.contoso.b\"]"
        case .whitespace(let i, let id): "apps[\(i)] '\(id)' holds white space or control characters; app ids are bundle ids"
        case .adminBound: "an admin token reaches every app; create it without apps, or bind a token without admin"
        }
    }

    /// The list to store: checked, repeated ids once, in the order given.
    static func check(_ apps: [String], scopes: Set<Scope>) throws(TokenAppsError) -> [String] {
        if !apps.isEmpty, scopes.contains(.admin) { throw .adminBound }
        var kept: [String] = []
        for (i, app) in apps.enumerated() {
            if app.allSatisfy(\.isWhitespace) { throw .empty(index: i) }
            if app.contains(",") { throw .comma(index: i, id: app) }
            if app.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.properties.generalCategory == .control }) {
                throw .whitespace(index: i, id: app)
            }
            if !kept.contains(app) { kept.append(app) }
        }
        return kept
    }
}
