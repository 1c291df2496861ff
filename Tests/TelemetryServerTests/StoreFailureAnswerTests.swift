import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import TestSupport
import Testing

@testable import TelemetryServer

/// A store failure reaches the client in words, never as the statement it failed on: the
/// audit's SQLITE_FULL answer quoted the whole INSERT. Here the disk really fills (the data
/// directory on a small tmpfs, the high-water guard off so the commit itself meets it).
@Suite struct StoreFailureAnswerTests {
    /// What a statement or GRDB's description of one would leave in a body.
    static let statementText = ["INSERT", "SELECT", "UPDATE ", "DELETE ", "VALUES", "executing", "`", "sqlite_", "batch("]

    @Test(.enabled(if: getuid() == 0, "mounting a tmpfs needs root"))
    func aFullDiskIsAnsweredWithoutTheStatement() async throws {
        let disk = try SmallDisk(megabytes: 8)
        defer { disk.unmount() }
        let adjust: @Sendable (inout ServerConfiguration) -> Void = { $0.disk = .init(minFreeBytes: 0, minFreeRatio: 0, keepFreeBytes: 0) }
        try await IngestHarness.run(parent: disk.mountPoint, adjust: adjust) { h in
            // Random text, so compression cannot make the batch small enough to fit.
            var rng = SeededRandom(seed: 23)
            func noise() -> String { (0..<8).map { _ in String(rng.next(), radix: 36) }.joined() }
            let body = (0..<3000).map { i in
                #"{"name":"AppLaunch","appId":"com.contoso.full","deviceId":"d\#(i)","eventId":"e\#(i)","data":{"note":"\#(noise())"}}"#
            }.joined(separator: "\n")
            let ballast = try disk.fill(leaving: 8192)

            let answer = try await h.post("/v1/telemetry", body)
            #expect(answer.status == .serviceUnavailable, "\(answer.body)")
            #expect(answer.headers[.retryAfter] != nil)
            for text in Self.statementText {
                #expect(!answer.body.contains(text), "the answer quotes a statement: \(answer.body)")
            }
            #expect(answer.errorMessage.contains("the disk holding the store is full"), "\(answer.body)")

            // Space returns: the same records are taken, nothing of the failed commit is left half-stored.
            try FileManager.default.removeItem(at: ballast)
            let retried = try await h.post("/v1/telemetry", body)
            #expect(retried.status == .ok, "\(retried.body)")
            #expect(retried.accepted == 3000 && (retried.duplicates ?? 0) == 0, "\(retried.body)")
        }
    }

    /// An error no route turned into an answer (a read that failed in the store, a bug) is a
    /// 500 in the API's error shape, and its description, which may quote a statement, stays
    /// in the log.
    @Test func anUnexpectedErrorIsA500WithoutItsDescription() async throws {
        struct Leaky: Error, CustomStringConvertible {
            var description: String { "SQLite error 1: no such column - while executing `SELECT raw FROM batch WHERE appId = 'x'`" }
        }
        let router = Router()
        router.add(middleware: StoreErrorMiddleware(logger: Logger(label: "store-error-tests")))
        router.get("/fails") { _, _ -> Response in throw Leaky() }
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/fails", method: .get) { r in
                let body = String(buffer: r.body)
                #expect(r.status == .internalServerError)
                #expect(body.contains("\"code\":\"internal_error\""), "\(body)")
                for text in Self.statementText { #expect(!body.contains(text), "\(body)") }
            }
        }
    }
}
