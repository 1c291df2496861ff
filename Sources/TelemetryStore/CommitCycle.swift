import Foundation
import StoreCore
import TelemetryModel

extension GroupCommitter {
    /// The requests of one commit cycle and what has happened to each.
    struct CommitCycle {
        let requests: [Pending]
        var outcomes: [[TelemetryEnvironment: [RecordKind: AppendOutcome]]]
        var failures: [(any Error)?]
        var answered: [Bool]
        /// The stage id of this cycle's cross-environment requests (nil when there are none).
        let stage: String?
        var staged: [Int] = []
        var decided = false

        init(_ requests: [Pending]) {
            self.requests = requests
            outcomes = Array(repeating: [:], count: requests.count)
            failures = Array(repeating: nil, count: requests.count)
            answered = Array(repeating: false, count: requests.count)
            stage = requests.contains(where: \.isCrossEnvironment) ? UUID().uuidString.lowercased() : nil
        }

        /// Hands each request of `indices` its outcomes from one transaction, whose groups
        /// were planned request by request, one per kind (`AppendRequest.groups(for:)`).
        mutating func record(_ written: [AppendOutcome], of indices: [Int], in env: TelemetryEnvironment) {
            var next = written.makeIterator()
            for i in indices {
                var byKind: [RecordKind: AppendOutcome] = [:]
                for kind in requests[i].request.kinds(in: env) { byKind[kind] = next.next() }
                outcomes[i][env] = byKind
            }
        }

        func live(in env: TelemetryEnvironment) -> [Int] {
            requests.indices.filter { failures[$0] == nil && requests[$0].environments.contains(env) }
        }

        /// Answers the single-environment requests that are finished. Cross-environment
        /// requests wait for `answerAll`, after their stage is settled, so a client told to
        /// retry never races the discarding of its staged part.
        mutating func answerFinished() {
            for i in requests.indices where !answered[i] && !requests[i].isCrossEnvironment {
                if let failure = failures[i] {
                    requests[i].continuation.resume(throwing: failure)
                } else if outcomes[i].count == requests[i].environments.count {
                    requests[i].continuation.resume(returning: AppendOutcomes(byEnvironment: outcomes[i]))
                } else {
                    continue
                }
                answered[i] = true
            }
        }

        /// Answers everything left at the end of the cycle; a request not stored in all its
        /// environments is answered with the failure that stopped it.
        mutating func answerAll() {
            for i in requests.indices where !answered[i] {
                if let failure = failures[i] {
                    requests[i].continuation.resume(throwing: failure)
                } else if outcomes[i].count == requests[i].environments.count {
                    requests[i].continuation.resume(returning: AppendOutcomes(byEnvironment: outcomes[i]))
                } else {
                    requests[i].continuation.resume(throwing: StoreError.commitIncomplete)
                }
                answered[i] = true
            }
        }
    }
}
