import Foundation
import StoreCore
import TelemetryModel
import Testing

@testable import TelemetryStore

/// A request carrying log records and telemetry events (an OTLP export) is stored all or
/// nothing: both kinds go into the same transaction of each environment, so a failure
/// between them, or of the cross-environment decision, leaves neither kind stored.
@Suite struct MixedKindCommitTests {
    typealias Faults = CrossEnvironmentCommitTests.ScriptedFaults

    static func request(_ tag: String, envs: [TelemetryEnvironment]) -> AppendRequest {
        var records: [RecordKind: [TelemetryEnvironment: [DecodedRecord]]] = [:]
        for kind in RecordKind.allCases {
            for env in envs {
                records[kind, default: [:]][env] = (0..<2).map {
                    StoreFixture.event(
                        app: "com.mixed", device: env.rawValue, time: Int64($0), eventId: "\(tag)-\(kind.rawValue)-\(env.rawValue)-\($0)")
                }
            }
        }
        return AppendRequest(receivedAt: 1, records: records)
    }

    /// How many records of each kind are stored, per environment.
    static func counts(_ store: SQLiteRecordStore) async throws -> [String: Int] {
        var out: [String: Int] = [:]
        for env in TelemetryEnvironment.allCases {
            for kind in RecordKind.allCases {
                var q = RecordQuery(kind: kind, env: env, limit: 1000, order: .asc)
                q.app = "com.mixed"
                let n = try await store.query(q).records.count
                if n > 0 { out["\(env.rawValue) \(kind.rawValue)"] = n }
            }
        }
        return out
    }

    @Test func aFailureBetweenTheKindsLeavesNeitherStoredAndTheRetryStoresBoth() async throws {
        let dir = CrossEnvironmentCommitTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let faults = Faults()
        let s = try CrossEnvironmentCommitTests.OpenStore(dir, faults: faults)
        faults.arm(.betweenKinds)
        await #expect(throws: CrossEnvironmentCommitTests.InjectedFault.self) {
            _ = try await s.store.append(Self.request("m", envs: [.prod]))
        }
        #expect(faults.state.withLock { $0.thrown[.betweenKinds] } == 1, "the fault point was not reached")
        #expect(try await Self.counts(s.store).isEmpty)
        let retry = try await s.store.append(Self.request("m", envs: [.prod]))
        #expect(retry[.prod, .event] == AppendOutcome(stored: 2, duplicates: 0, ids: [1, 2]))
        #expect(retry[.prod, .log] == AppendOutcome(stored: 2, duplicates: 0, ids: [3, 4]))
        #expect(try await Self.counts(s.store) == ["prod event": 2, "prod log": 2])
        await s.close()
    }

    @Test func bothKindsInBothEnvironmentsAreDecidedTogether() async throws {
        let dir = CrossEnvironmentCommitTests.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let faults = Faults()
        let s = try CrossEnvironmentCommitTests.OpenStore(dir, faults: faults)
        faults.arm(.beforeDecisionCommit)
        await #expect(throws: CrossEnvironmentCommitTests.InjectedFault.self) {
            _ = try await s.store.append(Self.request("x", envs: [.prod, .ppe]))
        }
        #expect(try await Self.counts(s.store).isEmpty)
        let retry = try await s.store.append(Self.request("x", envs: [.prod, .ppe]))
        for env in TelemetryEnvironment.allCases {
            for kind in RecordKind.allCases { #expect(retry[env, kind]?.stored == 2 && retry[env, kind]?.duplicates == 0) }
        }
        #expect(try await Self.counts(s.store) == ["prod event": 2, "prod log": 2, "ppe event": 2, "ppe log": 2])
        await s.close()
    }
}
