import Foundation
import TestSupport
import Testing

/// Bundles as the route serves them, read with the system's `unzip` or `tar` (an
/// independent reader); no daemon process is needed for that.
extension IngestHarness {
    struct Bundle {
        /// The archive, written into the run's data directory (it goes with the run).
        var path: String
        var members: [String: [UInt8]]
    }

    /// `GET /v1/bundles?<query>` as `token`, which must answer 200.
    func bundle(_ query: String, token: String) async throws -> Bundle {
        let (status, bytes, _) = try await exchange("/v1/bundles?\(query)", method: .get, headers: [("Authorization", "Bearer \(token)")])
        #expect(status == 200, "\(query): \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        let suffix = query.contains("format=tar.gz") ? "tar.gz" : "zip"
        let file = components.configuration.dataDirectory.appendingPathComponent("bundle-\(UUID().uuidString).\(suffix)")
        try Data(bytes).write(to: file)
        return Bundle(path: file.path, members: try SystemCommand.unpack(file.path))
    }

    /// Looks up the pseudonym a caller without `pii` is shown for `upn` (as the admin).
    func pseudonym(of upn: String) async throws -> String {
        let query = upn.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? upn
        return try #require(try await get("/v1/pseudonyms?identity=\(query)")["pseudonym"] as? String)
    }
}
