import Foundation
import HTTPTypes
import TestSupport
import Testing

@testable import TelemetryServer

/// The daemon serves exactly the API description kept in the repository, without a token.
/// That every route is described (and nothing else) is checked against the router's own
/// route table in `OpenAPIRouteTests`; the full conformance run (schemathesis) is
/// `scripts/schemathesis.sh`.
@Suite struct OpenAPIDocumentRouteTests {
    static let documentURL = OpenAPIRouteTests.documentURL

    @Test func servedDocumentIsTheRepositoryCopy() async throws {
        try await IngestHarness.run { daemon in
            let (status, served, _) = try await daemon.exchange("/openapi.yaml", method: .get)
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
    }

    @Test func documentIsServedWithoutAToken() async throws {
        try await IngestHarness.run { daemon in
            // A token that does not exist: a route that checked tokens would answer 401.
            let (status, body, headers) = try await daemon.exchange(
                "/openapi.yaml", method: .get, headers: [("Authorization", "Bearer not-a-token")])
            #expect(status == 200, "\(String(decoding: body, as: UTF8.self))")
            #expect(headers[.contentType] == "application/yaml")
            #expect(body.starts(with: Array("openapi: 3.".utf8)))
        }
    }
}
