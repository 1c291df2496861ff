import Bundles
import ControlState
import Foundation
import HTTPTypes
import Hummingbird
import Privacy
import StoreCore
import TelemetryModel

/// `GET /v1/events`, `GET /v1/logs` (with `follow=true`), `GET /v1/incidents/{id}`.
struct QueryRoutes: Sendable {
    let store: any RecordStore
    let clock: any WallClock
    let pseudonymizer: Pseudonymizer
    let tokens: TokenStore

    func register(on api: APIRoutes) {
        let read = api.requiring(.read, apps: .perApp)
        read.get("/v1/events") { request, context in try await records(request, context, kind: .event, member: "events") }
        read.get("/v1/logs") { request, context in try await records(request, context, kind: .log, member: "logs") }
        read.get("/v1/incidents/{id}") { _, context in try await incident(context) }
    }

    func records(_ request: Request, _ context: AppRequestContext, kind: RecordKind, member: String) async throws -> Response {
        let visibility = RecordVisibility(principal: context.principal, pseudonymizer: pseudonymizer)
        let now = clock.nowMilliseconds()
        var (query, follow) = try QueryParameters.parse(
            context.query, kind: kind, now: now, visibility: visibility, apps: context.readableApps)
        let search = try await SearchScope.apply(to: &query, parameters: context.query, store: store, visibility: visibility, now: now)
        let accept = request.headers[.accept]?.lowercased() ?? ""
        // Checked on every request, so a malformed `tail` is refused with or without follow.
        let tail = try FollowBacklog.size(tail: context.query.value("tail"), limit: context.query.value("limit"))
        if follow {
            // Only a token the store knows is re-checked (with auth off, the caller is no token).
            let access = context.principal.flatMap { p in
                tokens.token(id: p.id).map { _ in FollowAccess(tokens: tokens, opened: p, scope: .read) }
            }
            query.limit = tail
            return FollowStream(store: store, query: query, serverSentEvents: accept.contains("text/event-stream"), access: access)
                .response()
        }
        let ndjson = accept.contains("application/x-ndjson") || accept.contains("application/x-json-stream")
        var page = PageStream(store: store, query: query, member: member, ndjson: ndjson)
        page.search = JSONEncoding.bytes(search)
        return try await page.response()
    }

    func incident(_ context: AppRequestContext) async throws -> Response {
        let raw = context.parameters.get("id") ?? ""
        let key = IncidentID(parsing: raw)?.value ?? raw
        // The access check already refused another app's incident; this is its second line.
        guard let incident = try await store.incident(id: key), context.readableApps?.contains(incident.appId) ?? true else {
            throw IncidentApps.notFound(raw)
        }
        var levels: [String: Int] = [:]
        var page = RecordPage(records: [], nextAfter: nil)
        var q = RecordQuery(kind: .log, env: incident.env, incident: incident.id, limit: 1000, order: .asc)
        repeat {
            page = try await store.query(q)
            for r in page.records { levels[(r.keys.level ?? .info).name, default: 0] += 1 }
            q.after = page.nextAfter
        } while page.nextAfter != nil
        let visibility = RecordVisibility(principal: context.principal, pseudonymizer: pseudonymizer)
        var view = IncidentView(incident: incident, levels: levels)
        view.appId = visibility.text(view.appId)
        view.deviceId = view.deviceId.map(visibility.text)
        view.sessionId = view.sessionId.map(visibility.text)
        view.identity = visibility.identity(view.identity)
        view.descriptionWithheld = !visibility.piiAllowed && incident.description?.isEmpty == false
        view.description = visibility.freeText(view.description)
        return try .json(view)
    }
}

/// `GET /v1/incidents/{id}`: the incident's metadata and record counts by level.
struct IncidentView: Encodable {
    var id: String
    var guid: String
    var env: String
    var appId: String
    var deviceId: String?
    var sessionId: String?
    var identity: String?
    var description: String?
    /// Whether `description` is withheld from this caller, so a client can say that a token
    /// with the `pii` scope shows the user's words (as `GET /v1/incidents` does).
    var descriptionWithheld = false
    var createdAt: String
    var firstTime: String?
    var lastTime: String?
    var records: Int
    var levels: [String: Int]

    init(incident i: Incident, levels: [String: Int]) {
        id = i.id
        guid = i.guid
        env = i.env.rawValue
        appId = i.appId
        deviceId = i.deviceId
        sessionId = i.sessionId
        identity = i.identity
        description = i.description
        createdAt = Timestamp.format(milliseconds: i.createdAt)
        firstTime = i.firstTime.map(Timestamp.format(milliseconds:))
        lastTime = i.lastTime.map(Timestamp.format(milliseconds:))
        records = levels.values.reduce(0, +)
        self.levels = levels
    }
}
