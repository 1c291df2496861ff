import ControlState
import Foundation
import Hummingbird
import Privacy
import StoreCore
import TelemetryModel

/// `GET /v1/incidents?since=&until=&app=&device=`: "which incidents came in today?" — the
/// diagnostic uploads of one environment, newest first (by arrival), a page at a time. Each
/// names its app, device, user (a pseudonym without `pii`), the first line of the user's
/// description (withheld without `pii`, as everywhere) and how many records the user shared.
struct IncidentListRoutes: Sendable {
    let store: any RecordStore
    let clock: any WallClock
    let pseudonymizer: Pseudonymizer

    struct Answer: Encodable {
        var incidents: [Summary]
        var nextCursor: String?

        enum CodingKeys: String, CodingKey { case incidents, nextCursor }

        /// `nextCursor` is always there, `null` on the last page (as on record pages).
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(incidents, forKey: .incidents)
            try c.encode(nextCursor, forKey: .nextCursor)
        }
    }

    struct Summary: Encodable {
        var id: String
        var guid: String
        var env: String
        var appId: String
        var deviceId: String?
        var identity: String?
        /// The first line of what the user wrote; withheld text without the `pii` scope.
        var description: String?
        /// Whether `description` is withheld from this caller (the `pii` scope shows it).
        var descriptionWithheld: Bool
        var records: Int
        var createdAt: String
        var firstTime: String?
        var lastTime: String?
    }

    func register(on api: APIRoutes) {
        api.requiring(.read, apps: .perApp).get("/v1/incidents") { _, context in
            let visibility = RecordVisibility(principal: context.principal, pseudonymizer: pseudonymizer)
            var query = try Self.parse(context.query, now: clock.nowMilliseconds())
            query.apps = context.readableApps
            if let device = query.device {
                query.device = try await DeviceResolution.resolve(
                    device, env: query.env, app: query.app, apps: query.apps, store: store, visibility: visibility
                ).searched
            }
            let page = try await store.incidents(query)
            return try Response.json(
                Answer(
                    incidents: page.incidents.map { Self.summary($0, visibility: visibility) },
                    nextCursor: page.next.map { Self.encode($0, env: query.env) }))
        }
    }

    static func summary(_ i: Incident, visibility: RecordVisibility) -> Summary {
        let firstLine = i.description?.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init)
        let withheld = !visibility.piiAllowed && i.description?.isEmpty == false
        return Summary(
            id: i.id, guid: i.guid, env: i.env.rawValue, appId: visibility.clientString(i.appId),
            deviceId: i.deviceId.map(visibility.clientString), identity: visibility.identity(i.identity),
            description: withheld ? visibility.freeText(i.description) : firstLine, descriptionWithheld: withheld,
            records: i.recordCount, createdAt: Timestamp.format(milliseconds: i.createdAt),
            firstTime: i.firstTime.map(Timestamp.format(milliseconds:)), lastTime: i.lastTime.map(Timestamp.format(milliseconds:)))
    }

    static func parse(_ p: CallerQuery, now: Int64) throws -> IncidentQuery {
        let value = p.value
        var q = IncidentQuery(app: value("app"), device: value("device"))
        if let raw = value("env") { q.env = try EnvironmentParameter.parse(raw) }
        q.since = try value("since").map { try TimeParameter.parse("since", $0, now: now) }
        q.until = try value("until").map { try TimeParameter.parse("until", $0, now: now) }
        if let limit = value("limit") {
            guard let n = Int(limit), (1...1000).contains(n) else {
                throw APIError.badRequest("invalid_parameter", "limit must be an integer from 1 to 1000, not '\(limit)'")
            }
            q.limit = n
        }
        if let cursor = value("cursor") { q.after = try decode(cursor, env: q.env) }
        return q
    }

    /// The opaque cursor: the last incident served, bound to its environment.
    static func encode(_ c: IncidentCursor, env: TelemetryEnvironment) -> String {
        Data("i1:\(env.rawValue):\(c.createdAt):\(c.id)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: String, env: TelemetryEnvironment) throws -> IncidentCursor {
        var b64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while b64.count % 4 != 0 { b64 += "=" }
        let parts = Data(base64Encoded: b64).flatMap { String(data: $0, encoding: .utf8) }?.split(separator: ":", maxSplits: 3) ?? []
        guard parts.count == 4, parts[0] == "i1", let createdAt = Int64(parts[2]) else {
            throw APIError.badRequest("invalid_cursor", "cursor is not one this server issued")
        }
        guard parts[1] == env.rawValue else {
            throw APIError.badRequest("invalid_cursor", "cursor was issued for env \(parts[1]); repeat the query with that env")
        }
        return IncidentCursor(createdAt: createdAt, id: String(parts[3]))
    }
}
