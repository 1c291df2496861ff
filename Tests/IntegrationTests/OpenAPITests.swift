import Foundation
import NIOHTTP1
import Testing

/// The API description stays the API (issue 7, item 6): the daemon serves exactly the document
/// kept in the repository, every route the router registers is described, and nothing is
/// described that the router does not serve. The full conformance run (schemathesis) is
/// `scripts/schemathesis.sh`; these checks are the cheap ones that catch drift on every test run.
@Suite struct OpenAPITests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let documentURL = packageRoot.appendingPathComponent("openapi/openapi.yaml")
    static let serverSources = packageRoot.appendingPathComponent("Sources/TelemetryServer")

    /// An HTTP method and a path template, spelled the same way by Hummingbird and OpenAPI
    /// (`/v1/apps/{appId}`).
    struct Operation: Hashable, CustomStringConvertible, Comparable {
        var method: String
        var path: String
        var description: String { "\(method.uppercased()) \(path)" }
        static func < (a: Self, b: Self) -> Bool { (a.path, a.method) < (b.path, b.method) }
    }

    /// Every `router.get("...")`, `router.post(...)`, ... in the server's sources.
    static func registeredOperations() throws -> Set<Operation> {
        let pattern = try NSRegularExpression(pattern: #"router\.(get|post|put|delete|patch|head)\(\s*"([^"]+)""#)
        var found = Set<Operation>()
        let files = FileManager.default.enumerator(at: serverSources, includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            let range = NSRange(text.startIndex..., in: text)
            for match in pattern.matches(in: text, range: range) {
                guard let m = Range(match.range(at: 1), in: text), let p = Range(match.range(at: 2), in: text) else { continue }
                found.insert(Operation(method: String(text[m]), path: String(text[p])))
            }
        }
        return found
    }

    /// The operations under `paths:`. The document's layout is fixed (two-space indents: a
    /// path at depth 1, its methods at depth 2), so reading those lines is enough and keeps the
    /// test free of a YAML dependency.
    static func documentedOperations() throws -> Set<Operation> {
        let lines = try String(contentsOf: documentURL, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let methods: Set<String> = ["get", "post", "put", "delete", "patch", "head", "options", "trace"]
        var found = Set<Operation>()
        var inPaths = false
        var currentPath: String?
        for line in lines {
            if !line.hasPrefix(" ") && !line.isEmpty {
                inPaths = line == "paths:"
                currentPath = nil
                continue
            }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), !line.hasPrefix("   "), line.hasSuffix(":") {
                currentPath = String(line.dropFirst(2).dropLast())
            } else if let path = currentPath, line.hasPrefix("    "), !line.hasPrefix("     "),
                let colon = line.firstIndex(of: ":")
            {
                let key = line[line.index(line.startIndex, offsetBy: 4)..<colon]
                if methods.contains(String(key)) { found.insert(Operation(method: String(key), path: path)) }
            }
        }
        return found
    }

    @Test func everyRegisteredRouteIsDocumented() throws {
        let registered = try Self.registeredOperations()
        let documented = try Self.documentedOperations()
        // Guards against a broken grep or parse making the comparison vacuous.
        #expect(registered.count >= 20, "found only \(registered.sorted()) in \(Self.serverSources.path)")
        #expect(registered.contains(Operation(method: "post", path: "/v1/telemetry")))
        let undocumented = registered.subtracting(documented).sorted()
        #expect(undocumented.isEmpty, "registered but not in openapi/openapi.yaml: \(undocumented)")
    }

    @Test func everyDocumentedOperationExists() throws {
        let registered = try Self.registeredOperations()
        let documented = try Self.documentedOperations()
        #expect(documented.count >= 20, "parsed only \(documented.sorted()) from openapi/openapi.yaml")
        let missing = documented.subtracting(registered).sorted()
        #expect(missing.isEmpty, "documented but no route registers them: \(missing)")
    }

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
