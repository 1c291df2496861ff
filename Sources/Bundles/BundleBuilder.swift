public import Archive
public import Foundation
public import Privacy
public import StoreCore
public import TelemetryModel

/// A bundle request with its defaults resolved and checked against the store: what
/// `BundleBuilder.write` will produce. Built before any byte is streamed so refusals
/// (no scope, unknown incident) can still be proper HTTP errors.
public struct PreparedBundle: Sendable {
    public var request: BundleRequest
    public var env: TelemetryEnvironment
    public var since: Int64
    public var until: Int64
    public var windowDefaulted: Bool
    public var incident: Incident?
    public var createdAt: Int64
    /// An incident bundle tells the device's story: this device's records over the window,
    /// plus every record of the upload (nil: the request's scope alone).
    public var storyDevice: String?
    /// The devices whose identity-less records join an identity bundle (see `BundleRequest`).
    public var identityDevices: [String] = []

    /// `mam-bundle-MAM-7K2Q-9XPF-20261121T101530Z.zip`.
    public var fileName: String {
        let stamp = Timestamp.format(milliseconds: createdAt).filter { $0 != "-" && $0 != ":" }.prefix(15)
        let label = request.piiAllowed || request.incident != nil || request.identity == nil ? request.scopeLabel : "identity"
        let safe = label.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" }
        return "mam-bundle-\(String(safe))-\(stamp)Z.\(request.format.fileExtension)"
    }
}

/// What was written, for callers that want to log or test it.
public struct BundleReport: Sendable {
    public var counts: [RecordKind: Int]
    public var redaction: RedactionCounts
    public var files: [ManifestFile]
    public var journalIncluded: Bool
}

/// Builds a diagnostic bundle and streams it into a `BundleSink` as it is made:
/// records are read page by page, redacted, spooled one member at a time and put into a
/// libarchive stream (a zip member is compressed while it is spooled: `ArchiveMember`) whose
/// output is handed to the sink as it comes. Data files come first (hashed as they are
/// written) and `manifest.json` last, because it lists them.
public struct BundleBuilder: Sendable {
    public let store: any RecordStore
    public let pseudonymizer: Pseudonymizer
    /// Spool directory for members in progress (`<data>/tmp`).
    public let temporaryDirectory: URL
    public let daemonVersion: String
    /// Records per read of the store: about two compacted segments, so a segment is decoded
    /// at most twice rather than once per small page.
    public var pageSize = 32_768
    public var timelineLimit = 20_000
    public var includeJournal = true
    /// An incident's device window: from this long before the upload (two retry periods, so
    /// a failed enrollment and the retry it scheduled are both in) to `incidentAfter` after it,
    /// as the console's incident page shows it.
    public var incidentBefore: Int64 = 2 * 86_400_000
    public var incidentAfter: Int64 = 3_600_000
    /// Devices an identity bundle widens to, at most.
    public static let maxIdentityDevices = 50
    /// How long one read of a bundle's records may take before its page ends: the WAL grows
    /// behind an open snapshot by what ingest writes meanwhile (about 100 MB/s in a debug soak
    /// with random eventIds, where single-read bundles of 3-7 s left the files at up to 3.6x
    /// the size cap); at 250 ms that is a few tens of MB, and a bundle pays one row's re-read
    /// per page.
    public static let readBudget: Duration = .milliseconds(250)
    public static let defaultWindow: Int64 = 24 * 3_600_000

    public init(store: any RecordStore, pseudonymizer: Pseudonymizer, temporaryDirectory: URL, daemonVersion: String) {
        self.store = store
        self.pseudonymizer = pseudonymizer
        self.temporaryDirectory = temporaryDirectory
        self.daemonVersion = daemonVersion
    }

    public func prepare(_ request: BundleRequest, now: Int64) async throws -> PreparedBundle {
        guard request.hasScope else { throw BundleError.missingScope }
        var request = request
        var incident: Incident?
        if let raw = request.incident, !raw.isEmpty {
            let key = IncidentID(parsing: raw)?.value ?? raw
            guard let found = try await store.incident(id: key) else { throw BundleError.unknownIncident(raw) }
            incident = found
            request.incident = found.id
        }
        var since = request.since
        var until = request.until
        let defaulted = since == nil || until == nil
        if let incident, since == nil || until == nil {
            let first = min(incident.firstTime ?? incident.createdAt, incident.createdAt)
            let last = max(incident.lastTime ?? incident.createdAt, incident.createdAt)
            since = since ?? first.saturatingSubtracting(incidentBefore)
            until = until ?? last.saturatingAdding(incidentAfter)
        }
        let end = until ?? now
        let start = since ?? end.saturatingSubtracting(Self.defaultWindow)
        guard start <= end else { throw BundleError.invalidWindow }
        let env = request.env ?? incident?.env ?? .prod
        var prepared = PreparedBundle(
            request: request, env: env, since: start, until: end, windowDefaulted: defaulted, incident: incident, createdAt: now)
        // An incident asked for alone is the device's story around the upload.
        let otherScope = [request.device, request.identity, request.app, request.session].contains { !($0 ?? "").isEmpty }
        if let device = incident?.deviceId, !device.isEmpty, !otherScope, env == incident?.env { prepared.storyDevice = device }
        if request.expandIdentity, let user = identitySelector(request) {
            prepared.identityDevices = try await store.devices(
                usedBy: user, env: env, apps: request.apps, since: start, until: end, limit: Self.maxIdentityDevices)
        }
        return prepared
    }

    /// The reads that make up one kind's member: the request's scope, or for an incident's
    /// story the device's window and then the upload's records not already in it.
    func passes(_ bundle: PreparedBundle, kind: RecordKind) -> [(query: RecordQuery, skip: (@Sendable (RecordKeys) -> Bool)?)] {
        guard let device = bundle.storyDevice, let incident = bundle.incident else {
            var q = query(bundle, kind: kind)
            if !bundle.identityDevices.isEmpty { q.identityDevices = Set(bundle.identityDevices) }
            return [(q, nil)]
        }
        var window = RecordQuery(
            kind: kind, env: bundle.env, device: device, since: bundle.since, until: bundle.until, limit: pageSize, order: .asc)
        window.apps = bundle.request.apps
        guard kind == .log else { return [(window, nil)] }  // an upload holds log records
        var shared = RecordQuery(kind: kind, env: bundle.env, incident: incident.id, limit: pageSize, order: .asc)
        shared.apps = bundle.request.apps
        let (since, until) = (bundle.since, bundle.until)
        return [(window, nil), (shared, { k in k.deviceId == device && k.time >= since && k.time <= until })]
    }

    @discardableResult
    public func write<S: BundleSink>(_ bundle: PreparedBundle, to sink: inout S) async throws -> BundleReport {
        let archive = try ArchiveWriter(format: bundle.request.format, modificationTime: bundle.createdAt)
        var redactor = RecordVisibility(piiAllowed: bundle.request.piiAllowed, pseudonymizer: pseudonymizer).redactor()
        /// What redaction did in each file it touched, for the manifest.
        var redactedIn: [String: RedactionCounts] = [:]
        var timeline = Timeline(limit: timelineLimit)
        var summary = BundleSummary()
        var files: [ManifestFile] = []
        let capture = Timeline.captureKeys.union(BundleSummary.captureKeys)

        for (kind, name) in [(RecordKind.event, "telemetry.ndjson"), (.log, "logs.ndjson")] {
            let member = try MemberFile(name: name, directory: temporaryDirectory)
            defer { member.remove() }
            let before = redactor.counts
            let passes = passes(bundle, kind: kind)
            let pass = BundleRecordPass(
                kind: kind, redactor: redactor, timeline: timeline, summary: summary, member: member, capture: capture)
            let store = store
            files.append(
                try await ArchiveMember.write(member, into: archive, sink: &sink) {
                    for (first, skip) in passes {
                        pass.skip = skip
                        // Each page is one read of the store, ended after `readBudget` even
                        // when it found few records (a device's records can lie far apart);
                        // between pages other writers and checkpoints get their turn, so a
                        // bundle never holds one snapshot open for long.
                        var query = first
                        query.readBudget = Self.readBudget
                        while let next = try await store.scan(query, announcePageEnd: false, pass.take) {
                            try pass.flush()
                            try Task.checkCancellation()
                            query.after = next
                        }
                        try pass.flush()
                    }
                })
            (redactor, timeline, summary) = pass.finish()
            redactedIn[name] = redactor.counts.since(before)
        }

        let timelineFile = try MemberFile(name: "timeline.txt", directory: temporaryDirectory)
        defer { timelineFile.remove() }
        if let incident = bundle.incident {
            var shown = redactor
            let withheld = redactor.enabled && incident.description?.isEmpty == false
            timeline.addUpload(incident, description: shown.freeText(incident.description), withheld: withheld)
        }
        try timeline.render(header: header(bundle, redactor: &redactor) + summary.storyLines(), into: timelineFile)
        files.append(try await ArchiveMember.write(timelineFile, into: archive, sink: &sink))

        files.append(try await add("summary.json", bytes: try summary.json(), into: archive, sink: &sink))
        if let incident = bundle.incident {
            let before = redactor.counts
            let bytes = try incidentJSON(incident, redactor: &redactor)
            redactedIn["incident.json"] = redactor.counts.since(before)
            files.append(try await add("incident.json", bytes: bytes, into: archive, sink: &sink))
        }

        var journalNote: String?
        if includeJournal {
            let journal = try MemberFile(name: "journal.txt", directory: temporaryDirectory)
            defer { journal.remove() }
            let before = redactor.counts
            journalNote = JournalExcerpt.collect(
                scope: JournalScope(bundle, pseudonymizer: pseudonymizer), since: bundle.since, until: bundle.until,
                into: journal, scratch: temporaryDirectory, redactor: &redactor)
            if journalNote == nil {
                redactedIn["journal.txt"] = redactor.counts.since(before)
                files.append(try await ArchiveMember.write(journal, into: archive, sink: &sink))
            } else {
                _ = try journal.finish()
            }
        } else {
            journalNote = "journal collection disabled"
        }

        let manifest = try manifestJSON(
            bundle, summary: summary, redactor: redactor, redactedIn: redactedIn, files: files, journalNote: journalNote,
            timeline: timeline)
        _ = try await add("manifest.json", bytes: manifest, into: archive, sink: &sink)
        try archive.close()
        try await ArchiveMember.drain(archive, into: &sink)
        return BundleReport(
            counts: summary.counts, redaction: redactor.counts, files: files, journalIncluded: journalNote == nil)
    }

    private func add<S: BundleSink>(_ name: String, bytes: [UInt8], into archive: ArchiveWriter, sink: inout S) async throws -> ManifestFile
    {
        try archive.beginEntry(name: name, size: Int64(bytes.count))
        try bytes.withUnsafeBytes { try archive.writeData($0) }
        try archive.finishEntry()
        try await ArchiveMember.drain(archive, into: &sink)
        return ManifestFile(name: name, size: Int64(bytes.count), sha256: MemberFile.digest(bytes))
    }

    /// The first page's query for one kind of record in the request's own scope (the caller's
    /// apps and identity filter included).
    private func query(_ bundle: PreparedBundle, kind: RecordKind) -> RecordQuery {
        let r = bundle.request
        var q = RecordQuery(
            kind: kind, env: bundle.env, app: r.app, device: r.device, session: r.session, identity: r.identity,
            incident: r.incident, since: bundle.since, until: bundle.until, limit: pageSize, order: .asc)
        q.apps = r.apps
        q.identityPseudonym = r.identityPseudonym.map(pseudonymFilter)
        return q
    }

    /// The user of an identity scope, by UPN or by pseudonym: either widens to the same devices.
    private func identitySelector(_ r: BundleRequest) -> IdentitySelector? {
        if let identity = r.identity { return .identity(identity) }
        return r.identityPseudonym.map { .pseudonym(pseudonymFilter($0)) }
    }

    private func pseudonymFilter(_ pseudonym: String) -> IdentityPseudonymFilter {
        IdentityPseudonymFilter(pseudonym: pseudonym, pseudonymOf: pseudonymizer.identityPseudonym)
    }

    /// The timeline's opening lines. Ids a client sent (device, app, session) go through the
    /// caller's `redactor` like any record text: a device id may hold an e-mail address.
    private func header(_ b: PreparedBundle, redactor: inout RecordRedactor) -> [String] {
        let redaction = redactor.enabled
        var scope: [String] = []
        if let v = b.request.incident {
            scope.append("incident \(v)")
            if let device = b.storyDevice {
                scope.append(
                    "device \(redactor.scrub(text: device)) from \(Self.spoken(incidentBefore)) before the upload to \(Self.spoken(incidentAfter)) after, with every record the user shared"
                )
            }
        }
        if let v = b.request.device { scope.append("device \(redactor.scrub(text: v))") }
        let r = b.request
        if let v = r.piiAllowed ? r.identity ?? r.identityPseudonym : r.identityScopePseudonym(pseudonymizer) {
            scope.append("identity \(v)")
            if !b.identityDevices.isEmpty {
                let devices = b.identityDevices.map { redactor.scrub(text: $0) }
                scope.append("with the logs of its devices \(devices.joined(separator: ", "))")
            }
        }
        if let v = b.request.app { scope.append("app \(redactor.scrub(text: v))") }
        if let v = b.request.session { scope.append("session \(redactor.scrub(text: v))") }
        return [
            "MAM diagnostic timeline — \(scope.joined(separator: ", ")) (\(b.env.rawValue))",
            "window \(Timestamp.format(milliseconds: b.since)) .. \(Timestamp.format(milliseconds: b.until)) (device time, UTC)",
            redaction
                ? "personal data redacted: UPNs/emails, object ids and tokens appear as stable pseudonyms (user-…, oid-…, token-…); verbose log text is withheld ([withheld: N chars, text-…])"
                : "personal data NOT redacted (caller allowed to see PII); credentials appear as keyed masks (token-…)",
            "SDK rhythm: failed enrollments are retried every 24 h; enrolled apps check in for policy every 8 h.",
        ]
    }

    /// `2 days`, `1 hour`, `90 min`: a margin as the header says it.
    static func spoken(_ ms: Int64) -> String {
        if ms % 86_400_000 == 0 { return ms == 86_400_000 ? "1 day" : "\(ms / 86_400_000) days" }
        if ms % 3_600_000 == 0 { return ms == 3_600_000 ? "1 hour" : "\(ms / 3_600_000) hours" }
        return "\(ms / 60_000) min"
    }

    private func incidentJSON(_ i: Incident, redactor: inout RecordRedactor) throws -> [UInt8] {
        let object: [String: Any] = [
            "id": i.id, "guid": i.guid, "env": i.env.rawValue, "appId": redactor.scrub(text: i.appId),
            "deviceId": i.deviceId.map { redactor.scrub(text: $0) } ?? NSNull(),
            "sessionId": i.sessionId.map { redactor.scrub(text: $0) } ?? NSNull(),
            "identity": redactor.redactIdentity(i.identity) ?? NSNull(),
            "description": redactor.freeText(i.description) ?? NSNull(),
            "createdAt": Timestamp.format(milliseconds: i.createdAt), "records": i.recordCount,
            "firstTime": i.firstTime.map(Timestamp.format(milliseconds:)) ?? NSNull(),
            "lastTime": i.lastTime.map(Timestamp.format(milliseconds:)) ?? NSNull(),
        ]
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) + [0x0A]
    }

    private func manifestJSON(
        _ b: PreparedBundle, summary: BundleSummary, redactor: RecordRedactor, redactedIn: [String: RedactionCounts],
        files: [ManifestFile], journalNote: String?, timeline: Timeline
    ) throws -> [UInt8] {
        let r = b.request
        let identity = redactor.enabled || r.identity == nil ? r.identityScopePseudonym(pseudonymizer) : r.identity
        var scrubber = redactor
        let shown = { (id: String) in scrubber.scrub(text: id) }
        let request: [String: Any] = [
            "incident": r.incident ?? NSNull(), "device": r.device ?? NSNull(), "identity": identity ?? NSNull(),
            "app": r.app ?? NSNull(), "session": r.session ?? NSNull(), "env": b.env.rawValue,
            "since": Timestamp.format(milliseconds: b.since), "until": Timestamp.format(milliseconds: b.until),
            "windowDefaulted": b.windowDefaulted, "format": r.format.rawValue,
            // What the scope was widened to: an incident's device story, a user's devices.
            "storyDevice": b.storyDevice.map(shown) ?? NSNull(), "identityDevices": b.identityDevices.map(shown),
        ]
        let c = redactor.counts
        let object: [String: Any] = [
            "bundleVersion": 1,
            "request": request,
            "caller": r.caller,
            "createdAt": Timestamp.format(milliseconds: b.createdAt),
            "daemonVersion": daemonVersion,
            "counts": ["telemetry": summary.counts[.event] ?? 0, "logs": summary.counts[.log] ?? 0],
            "redaction": [
                "enabled": redactor.enabled,
                "piiAllowed": r.piiAllowed,
                "method": redactor.enabled
                    ? "HMAC-SHA256 keyed pseudonyms, stable for this daemon's key; verbose log text and incident descriptions withheld (length and keyed digest)"
                    : "credentials masked (keyed token-… marks); personal data shown (caller allowed to see PII)",
                "valuesRedacted": ["upn": c.upn, "objectId": c.objectId, "token": c.token],
                "textWithheld": c.textWithheld,
                "verboseMessagesScrubbed": c.verboseMessagesScrubbed,
                // Where each replacement was made; timeline.txt and summary.json are built
                // from the already redacted records (timeline.txt repeats the incident's
                // description as incident.json shows it) and add none of their own.
                "byFile": redactedIn.mapValues { f in
                    [
                        "upn": f.upn, "objectId": f.objectId, "token": f.token, "textWithheld": f.textWithheld,
                        "verboseMessagesScrubbed": f.verboseMessagesScrubbed,
                    ]
                },
            ] as [String: Any],
            "timeline": ["entries": timeline.entries.count, "omitted": timeline.omitted],
            "journal": journalNote.map { ["included": false, "reason": $0] as [String: Any] } ?? ["included": true],
            "files": files.map { ["name": $0.name, "size": $0.size, "sha256": $0.sha256] as [String: Any] },
        ]
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])) + [0x0A]
    }
}
