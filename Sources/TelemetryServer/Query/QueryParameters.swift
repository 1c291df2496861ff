import Bundles
import Foundation
import Hummingbird
import Privacy
import StoreCore
import TelemetryModel

/// Turns `GET /v1/events` / `GET /v1/logs` query parameters into a `RecordQuery`,
/// refusing anything malformed with a 400 that names the parameter. The query carries the
/// caller's `visibility` as its presenter, so the records it returns — and what `contains`
/// can match — are only ever what the caller may see, and the caller's apps (`apps`, nil
/// for every app), so it returns no other app's records.
enum QueryParameters {
    static func parse(
        _ p: CallerQuery, kind: RecordKind, now: Int64, visibility: RecordVisibility, apps: Set<String>?
    ) throws -> (RecordQuery, follow: Bool) {
        let value = p.value
        var q = RecordQuery(kind: kind, presenter: visibility)
        q.apps = apps
        if let env = value("env") { q.env = try EnvironmentParameter.parse(env) }
        q.app = value("app")
        q.device = value("device")
        q.session = value("session")
        q.setIdentity(p.identity, pseudonymizer: visibility.pseudonymizer)
        q.name = value("name")
        q.contains = value("contains")
        if let incident = value("incident") {
            guard let id = IncidentID(parsing: incident) else {
                throw APIError.badRequest("invalid_parameter", "incident '\(incident)' is not an incident id like MAM-7K2Q-9XPF")
            }
            q.incident = id.value
        }
        if let code = value("statusCode") {
            guard let c = Int(code) else { throw APIError.badRequest("invalid_parameter", "statusCode must be an integer, not '\(code)'") }
            q.statusCode = c
        }
        if let level = value("level") {
            guard let l = LogLevel(name: level) else {
                throw APIError.badRequest("invalid_parameter", "level must be verbose, info, warning or error, not '\(level)'")
            }
            q.minLevel = l
        }
        for (name, keyPath) in [("since", \RecordQuery.since), ("until", \RecordQuery.until)] {
            if let text = value(name) { q[keyPath: keyPath] = try TimeParameter.parse(name, text, now: now) }
        }
        if let order = value("order") {
            guard let o = RecordQuery.Order(rawValue: order.lowercased()) else {
                throw APIError.badRequest("invalid_parameter", "order must be asc or desc, not '\(order)'")
            }
            q.order = o
        }
        if let limit = value("limit") {
            guard let n = Int(limit), (1...10_000).contains(n) else {
                throw APIError.badRequest("invalid_parameter", "limit must be an integer from 1 to 10000, not '\(limit)'")
            }
            q.limit = n
        }
        if let cursor = value("cursor") {
            q.after = try Cursor.decode(cursor, for: q)
        }
        var follow = false
        if let raw = value("follow")?.lowercased() {
            switch raw {
            case "true", "1", "yes": follow = true
            case "false", "0", "no": follow = false
            default: throw APIError.badRequest("invalid_parameter", "follow must be true or false, not '\(raw)'")
            }
        }
        return (q, follow)
    }
}

extension RecordQuery {
    /// Filters by what `identity=` gave: an identity, or a pseudonym matched against the
    /// pseudonyms of the records' identities.
    mutating func setIdentity(_ identity: CallerQuery.Identity?, pseudonymizer: Pseudonymizer) {
        switch identity {
        case .identity(let upn): self.identity = upn
        case .pseudonym(let p): identityPseudonym = IdentityPseudonymFilter(pseudonym: p, pseudonymOf: pseudonymizer.identityPseudonym)
        case nil: break
        }
    }
}

/// The opaque pagination cursor: the last record id served, bound to the kind,
/// environment and order it was issued for, so it cannot be replayed against another query.
enum Cursor {
    static func encode(after id: Int64, for q: RecordQuery) -> String {
        let plain = "v1:\(q.kind.rawValue):\(q.env.rawValue):\(q.order.rawValue):\(id)"
        return Data(plain.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String, for q: RecordQuery) throws -> Int64 {
        var b64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        guard let data = Data(base64Encoded: b64), let plain = String(data: data, encoding: .utf8) else {
            throw APIError.badRequest("invalid_cursor", "cursor is not one this server issued")
        }
        let parts = plain.split(separator: ":")
        guard parts.count == 5, parts[0] == "v1", let id = Int64(parts[4]) else {
            throw APIError.badRequest("invalid_cursor", "cursor is not one this server issued")
        }
        guard parts[1] == q.kind.rawValue, parts[2] == q.env.rawValue, parts[3] == q.order.rawValue else {
            throw APIError.badRequest(
                "invalid_cursor",
                "cursor was issued for \(parts[1]) in \(parts[2]) order \(parts[3]); repeat the query with the same kind, env and order")
        }
        return id
    }
}
