import Archive
import Bundles
import Crypto
import Foundation
import Metrics
import Privacy
import StoreCore
import TelemetryModel
import TelemetryStore

/// A real SQLite store in a temp directory, filled with a small fleet: two prod devices
/// (two users), PPE records for the first device, and one diagnostic upload (incident).
final class BundleFixture {
    static let t0: Int64 = 1_795_680_000_000  // 2026-11-26T08:00:00Z
    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000
    static let alice = "Alice.Smith@Contoso.com"
    static let bob = "bob@fabrikam.com"
    static let aliceOid = "3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b"
    static let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXZhbHVl"
    static let incidentID = "MAM-7K2Q-9XPF"

    let directory: URL
    let store: SQLiteRecordStore
    let pseudonymizer = Pseudonymizer(key: SymmetricKey(data: [UInt8](repeating: 7, count: 32)))
    private let committerTask: Task<Void, Error>
    /// (env, id) of every record appended, by a label the tests use.
    var ids: [String: Set<String>] = [:]

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("bundles-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        store = try SQLiteRecordStore(directory: directory, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
        let committer = store.committer
        committerTask = Task { try await committer.run() }
    }

    func close() async {
        await store.committer.close()
        committerTask.cancel()
        try? FileManager.default.removeItem(at: directory)
    }

    var builder: BundleBuilder {
        var b = BundleBuilder(
            store: store, pseudonymizer: pseudonymizer, temporaryDirectory: directory.appendingPathComponent("tmp"),
            daemonVersion: "test-1")
        b.includeJournal = false
        return b
    }

    static func event(
        _ name: String, at time: Int64, app: String = "com.contoso.mail", device: String, identity: String,
        detail: String = "", data: String = "", statusCode: Int? = nil, succeeded: Bool? = nil, duration: Double? = nil,
        settings: String = "{\"VerboseLoggingEnabled\":\"YES\"}"
    ) -> DecodedRecord {
        let json = """
            {"name":"\(name)","time":"\(Timestamp.format(milliseconds: time))","appId":"\(app)","sdkVersion":"19.6.0",\
            "deviceId":"\(device)","sessionId":"s-\(device)","identity":"\(identity)","accountId":"\(aliceOid)",\
            "settings":\(settings),"data":{\(data)}}
            """
        let keys = RecordKeys(
            time: time, appId: app, deviceId: device, sessionId: "s-\(device)", identity: identity.lowercased(), name: name,
            detail: detail, statusCode: statusCode, durationMs: duration, succeeded: succeeded)
        return DecodedRecord(json: Array(json.utf8), keys: keys, flags: .unspecified, eventId: UUID().uuidString)
    }

    static func log(
        _ level: LogLevel, _ message: String, at time: Int64, device: String, identity: String, incident: String = ""
    ) -> DecodedRecord {
        var w = JSONWriter()
        w.beginObject()
        w.field("time", Timestamp.format(milliseconds: time))
        w.field("level", level.name)
        w.field("message", message)
        w.field("component", "MAMEnrollment")
        w.field("appId", "com.contoso.mail")
        w.field("deviceId", device)
        w.field("sessionId", "s-\(device)")
        w.field("identity", identity)
        if !incident.isEmpty { w.field("incident", incident) }
        w.endObject()
        let keys = RecordKeys(
            time: time, appId: "com.contoso.mail", deviceId: device, sessionId: "s-\(device)",
            identity: identity.lowercased(), detail: "MAMEnrollment", level: level, incident: incident)
        return DecodedRecord(json: w.bytes, keys: keys, flags: .unspecified, eventId: UUID().uuidString, message: message)
    }

    func append(_ label: String, _ records: [DecodedRecord], kind: RecordKind, env: TelemetryEnvironment = .prod, incident: Incident? = nil)
        async throws
    {
        let outcome = try await store.append(records, kind: kind, env: env, receivedAt: Self.t0 + 10 * Self.hour, incident: incident)
        for id in outcome.ids { ids[label, default: []].insert("\(env.rawValue)/\(kind.rawValue)/\(id)") }
    }

    /// The standard fleet used by most tests.
    func fill() async throws {
        let t = Self.t0
        let m = Self.minute
        let h = Self.hour
        try await append(
            "alice-events",
            [
                Self.event("AppLaunch", at: t, device: "D1", identity: Self.alice, detail: "MAM-WE", data: "\"managementType\":\"MAM-WE\""),
                Self.event(
                    "EnrollmentCall", at: t + m, device: "D1", identity: Self.alice, detail: "enroll",
                    data:
                        "\"operation\":\"enroll\",\"api\":\"registerAndEnrollAccount\",\"statusCode\":200,\"errorString\":\"license missing for \(Self.alice)\"",
                    statusCode: 200, succeeded: false, duration: 812),
                Self.event(
                    "EnrollmentCall", at: t + 3 * h, device: "D1", identity: Self.alice.uppercased(), detail: "enroll",
                    data: "\"operation\":\"enroll\",\"api\":\"retry\",\"statusCode\":100", statusCode: 100, succeeded: true, duration: 420),
                Self.event(
                    "IntuneAction", at: t + 3 * h + 5 * m, device: "D1", identity: Self.alice, detail: "SelectiveWipe",
                    data: "\"action\":\"SelectiveWipe\",\"result\":\"done\""),
            ], kind: .event)
        try await append(
            "alice-logs",
            [
                Self.log(
                    .verbose, "token acquired for \(Self.alice) Authorization: Bearer \(Self.jwt)", at: t + 2 * m, device: "D1",
                    identity: Self.alice),
                Self.log(.warning, "policy endpoint slow", at: t + 4 * m, device: "D1", identity: Self.alice),
            ], kind: .log)
        try await append(
            "bob-events",
            [
                Self.event("AppLaunch", at: t + 10 * m, device: "D2", identity: Self.bob, detail: "MDM"),
                Self.event(
                    "EnrollmentCall", at: t + 11 * m, device: "D2", identity: Self.bob, detail: "policyCheckIn",
                    statusCode: 101, succeeded: true, duration: 90),
            ], kind: .event)
        try await append(
            "bob-logs", [Self.log(.error, "refresh failed for \(Self.bob)", at: t + 12 * m, device: "D2", identity: Self.bob)], kind: .log)
        try await append(
            "ppe-events",
            [
                Self.event(
                    "AppLaunch", at: t + 20 * m, device: "D1", identity: Self.alice, detail: "MAM-WE",
                    settings: "{\"MAMTelemetryUsePPE\":true}")
            ], kind: .event, env: .ppe)
        let incident = Incident(
            id: Self.incidentID, guid: UUID().uuidString, env: .prod, appId: "com.contoso.mail", deviceId: "D1",
            sessionId: "s-D1", identity: Self.alice, description: "cannot open mail, call \(Self.alice)", createdAt: t + 4 * h,
            recordCount: 2, firstTime: t + 3 * h + 30 * m, lastTime: t + 3 * h + 40 * m)
        try await append(
            "incident-logs",
            [
                Self.log(
                    .info, "diagnostic upload started", at: t + 3 * h + 30 * m, device: "D1", identity: Self.alice,
                    incident: Self.incidentID),
                Self.log(
                    .error, "enrollment state unknown for \(Self.alice)", at: t + 3 * h + 40 * m, device: "D1", identity: Self.alice,
                    incident: Self.incidentID),
            ], kind: .log, incident: incident)
    }

    /// The whole window the fleet spans.
    static var window: (Int64, Int64) { (t0 - hour, t0 + 6 * hour) }

    func bundle(_ request: BundleRequest, pageSize: Int? = nil) async throws -> BundleArchive {
        var b = builder
        if let pageSize { b.pageSize = pageSize }
        let prepared = try await b.prepare(request, now: Self.t0 + 12 * Self.hour)
        let path = directory.appendingPathComponent("out-\(UUID().uuidString).\(request.format.fileExtension)").path
        var sink = try FileSink(path: path)
        try await b.write(prepared, to: &sink)
        try sink.close()
        return BundleArchive(path: path, format: request.format)
    }
}

/// Writes streamed archive bytes to a file.
struct FileSink: BundleSink {
    let handle: FileHandle
    var written: Int64 = 0
    var writes = 0

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    }

    mutating func write(_ bytes: [UInt8]) async throws {
        try handle.write(contentsOf: bytes)
        written += Int64(bytes.count)
        writes += 1
    }

    func close() throws { try handle.close() }
}

/// A finished bundle on disk, opened with the system's own tools.
struct BundleArchive {
    let path: String
    let format: ArchiveFormat

    var bytes: Data { FileManager.default.contents(atPath: path) ?? Data() }

    func member(_ name: String) throws -> String {
        let out = try run(format == .zip ? ["/usr/bin/unzip", "-p", path, name] : ["/usr/bin/tar", "-xzOf", path, name])
        return String(decoding: out.stdout, as: UTF8.self)
    }

    /// NDJSON member as parsed objects.
    func records(_ name: String) throws -> [[String: Any]] {
        try member(name).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    /// "env/kind/id" of every record in the bundle.
    func recordKeys() throws -> Set<String> {
        var keys = Set<String>()
        for (name, kind) in [("telemetry.ndjson", "event"), ("logs.ndjson", "log")] {
            for r in try records(name) { keys.insert("\(r["env"] as! String)/\(kind)/\((r["id"] as! NSNumber).int64Value)") }
        }
        return keys
    }

    func manifest() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(try member("manifest.json").utf8)) as! [String: Any]
    }
}

struct ProcessOutput {
    var status: Int32
    var stdout: Data
}

func run(_ argv: [String]) throws -> ProcessOutput {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: argv[0])
    p.arguments = Array(argv.dropFirst())
    let pipe = Pipe()
    p.standardOutput = pipe
    p.standardError = FileHandle.nullDevice
    try p.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return ProcessOutput(status: p.terminationStatus, stdout: data)
}
