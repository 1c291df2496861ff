import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// The daemon serves exactly the API description kept in the repository, without a token.
/// That every route is described (and nothing else) is checked against the router's own
/// route table in `TelemetryServerTests/OpenAPIRouteTests`; the full conformance run
/// (schemathesis) is `scripts/schemathesis.sh`.
@Suite struct OpenAPITests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let documentURL = packageRoot.appendingPathComponent("openapi/openapi.yaml")

    @Test func servedDocumentIsTheRepositoryCopy() async throws {
        let daemon = try DaemonProcess()
        try await daemon.start()
        defer { daemon.cleanUp() }
        let (status, served) = try await daemon.get("/openapi.yaml")
        #expect(status == 200)
        let file = try [UInt8](Data(contentsOf: Self.documentURL))
        let firstDifference = zip(served.indices, zip(served, file)).first { $0.1.0 != $0.1.1 }?.0 ?? min(served.count, file.count)
        #expect(
            served == file,
            """
            GET /openapi.yaml (\(served.count) bytes) differs from openapi/openapi.yaml (\(file.count) bytes) \
            from byte \(firstDifference); rerun scripts/gen-openapi.sh and rebuild
            """)
    }

    @Test func documentIsServedWithoutAToken() async throws {
        let daemon = try DaemonProcess()
        try await daemon.start()
        defer { daemon.cleanUp() }
        // A token that does not exist: a route that checked tokens would answer 401.
        let (status, body, headers) = try await daemon.post(
            "/openapi.yaml", body: [], headers: [("Authorization", "Bearer not-a-token")], method: .GET)
        #expect(status == 200, "\(String(decoding: body, as: UTF8.self))")
        #expect(headers.first(name: "Content-Type") == "application/yaml")
        #expect(body.starts(with: Array("openapi: 3.".utf8)))
    }
}
