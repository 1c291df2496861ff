public import Archive
import Foundation
import Privacy
public import TelemetryModel

/// What a support engineer asked for: a scope (at least one of incident, device, identity,
/// app, session — combined with AND), a device-time window, the environment and the format,
/// plus who asked and whether they may see personal data. Kept free of HTTP so the CLI,
/// the server and the tests describe a bundle the same way.
public struct BundleRequest: Sendable, Hashable {
    public var incident: String?
    public var device: String?
    /// Compared case-insensitively: stored lower-cased.
    public var identity: String? { didSet { identity = identity?.lowercased() } }
    /// The identity scope as a `user-…` pseudonym (how a caller without `pii` names a user):
    /// the records whose identity has it, widened to its devices as `identity` is.
    public var identityPseudonym: String? { didSet { identityPseudonym = identityPseudonym?.lowercased() } }
    /// Only these apps' records (the caller's app binding); nil: every app.
    public var apps: Set<String>?
    public var app: String?
    public var session: String?
    /// Window, epoch ms inclusive; nil = default (incident window or last 24 h).
    public var since: Int64?
    public var until: Int64?
    /// nil = the incident's environment, else prod.
    public var env: TelemetryEnvironment?
    public var format: ArchiveFormat
    public var caller: String
    public var piiAllowed: Bool
    /// With `identity` or `identityPseudonym`: also the identity-less records (device logs)
    /// of the devices the user used in the window, as `GET /v1/logs?identity=` does by default.
    public var expandIdentity = true

    public init(
        incident: String? = nil, device: String? = nil, identity: String? = nil, app: String? = nil,
        session: String? = nil, since: Int64? = nil, until: Int64? = nil, env: TelemetryEnvironment? = nil,
        format: ArchiveFormat = .zip, caller: String = "anonymous", piiAllowed: Bool = false, expandIdentity: Bool = true
    ) {
        self.expandIdentity = expandIdentity
        self.incident = incident
        self.device = device
        self.identity = identity?.lowercased()
        self.app = app
        self.session = session
        self.since = since
        self.until = until
        self.env = env
        self.format = format
        self.caller = caller
        self.piiAllowed = piiAllowed
    }

    /// The scope parameter names, as the API spells them.
    public static let scopeParameters = ["incident", "device", "identity", "app", "session"]

    public var hasScope: Bool { [incident, device, identity, identityPseudonym, app, session].contains { !($0 ?? "").isEmpty } }

    /// The pseudonym of the identity scope, however it was given.
    func identityScopePseudonym(_ pseudonymizer: Pseudonymizer) -> String? {
        identityPseudonym ?? identity.map(pseudonymizer.identityPseudonym)
    }

    /// A short label for file names: `MAM-7K2Q-9XPF`, `device-abc`, ...
    public var scopeLabel: String {
        if let incident { return incident }
        if let device { return "device-\(device)" }
        if let session { return "session-\(session)" }
        if let app { return "app-\(app)" }
        return "identity"
    }
}

/// Why a bundle could not be started. Raised before any byte is streamed, so the HTTP layer
/// can still answer with a proper status.
public enum BundleError: Error, Sendable, Hashable, CustomStringConvertible {
    case missingScope
    case unknownIncident(String)
    case invalidWindow

    public var description: String {
        switch self {
        case .missingScope:
            "a bundle needs at least one scope: \(BundleRequest.scopeParameters.joined(separator: ", "))"
        case .unknownIncident(let id): "no incident '\(id)'; incident ids look like MAM-7K2Q-9XPF"
        case .invalidWindow: "'since' must not be after 'until'"
        }
    }
}
