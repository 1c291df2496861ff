import Bundles
import Compression
import Crypto
import Foundation
import Privacy
import StoreCore
import TelemetryModel
import TelemetryStore

/// The receive time every step stamps: fixed, so counts do not depend on the clock.
let sampleReceivedAt: Int64 = 1_790_000_600_000

/// The sample request decoded once, for the steps that start after decoding.
func decodedSample() throws -> [DecodedRecord] {
    try TelemetryEventDecoder().decode(body: SampleRequest().body, receivedAt: sampleReceivedAt).records
}

final class DecodeStep: PreparedHotPath {
    let body = SampleRequest().body
    let decoder = TelemetryEventDecoder()
    var expectedRecords: Int { 1_000 }

    func run() throws -> Int {
        let (records, rejected) = try decoder.decode(body: body, receivedAt: sampleReceivedAt)
        return records.count + rejected.count
    }
}

/// What the ingest pipeline does per record before anything touches disk: the record's own
/// flags resolved against the registry's for its app (looked up once per app per request, as
/// the daemon caches it), and the record grouped under the environment it goes to.
final class FlagsStep: PreparedHotPath {
    let records: [DecodedRecord]
    /// The registry as the daemon holds it: one app registered PPE, one opted out, the rest unknown.
    let registry: [String: AppFlags] = [
        "com.contoso.crm": AppFlags(usePPE: true), "com.microsoft.office.word": AppFlags(telemetryDisabled: false),
    ]
    var expectedRecords: Int { 1_000 }

    init() { records = (try? decodedSample()) ?? [] }

    func run() -> Int {
        var byApp: [String: AppFlags?] = [:]
        var byEnv: [TelemetryEnvironment: [DecodedRecord]] = [:]
        var dropped = 0
        for record in records {
            let appId = record.keys.appId
            let registered: AppFlags?
            if let cached = byApp[appId] {
                registered = cached
            } else {
                registered = registry[appId]
                byApp[appId] = registered
            }
            switch PrivacyDecision.resolve(record: record.flags, registry: registered) {
            case .store(let env): byEnv[env, default: []].append(record)
            case .drop: dropped += 1
            }
        }
        return byEnv.values.reduce(dropped) { $0 + $1.count }
    }
}

final class CompressStep: PreparedHotPath {
    let body = SampleRequest().body
    var expectedRecords: Int { 1_000 }

    func run() throws -> Int {
        let compressed = try Deflate.compress(body, level: 6)
        // Every line is in the output: the inflated length is the body's.
        return compressed.isEmpty ? 0 : 1_000
    }
}

/// Stored records shown to a support engineer without the `pii` scope: identities and
/// e-mail addresses become keyed pseudonyms, through the same presenter a query uses.
final class RenderStep: PreparedHotPath {
    let records: [StoredRecord]
    let pseudonymizer: Pseudonymizer
    var expectedRecords: Int { 1_000 }

    init() throws {
        records = try decodedSample().enumerated().map { index, record in
            StoredRecord(id: Int64(index + 1), receivedAt: sampleReceivedAt, env: .prod, keys: record.keys, json: record.json)
        }
        let key = SymmetricKey(data: [UInt8](repeating: 0x5A, count: PseudonymKeyFile.keyLength))
        pseudonymizer = Pseudonymizer(key: key)
    }

    /// One request's presenter per operation, as the daemon makes one per request: its
    /// pseudonym cache starts empty, so every distinct user and object id is keyed once.
    func run() -> Int {
        let presenter: any RecordPresenter = RecordVisibility(piiAllowed: false, pseudonymizer: pseudonymizer)
        var shown = 0
        for record in records where !presenter.present(record).json.isEmpty { shown += 1 }
        return shown
    }
}

final class RollupStep: PreparedHotPath {
    let keys: [RecordKeys]
    var expectedRecords: Int { 1_000 }

    init() { keys = ((try? decodedSample()) ?? []).map(\.keys) }

    func run() -> Int {
        var delta = RollupDeltaProbe()
        for k in keys { delta.add(k, receivedAt: sampleReceivedAt) }
        return delta.rows > 0 ? delta.events : 0
    }
}
