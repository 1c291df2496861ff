import Foundation
import Testing

@testable import TelemetryServer

/// The API description stays the API: every route in the router's own table is described in
/// `openapi/openapi.yaml`, and nothing is described that the router does not serve.
@Suite struct OpenAPIRouteTests {
    static let documentURL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("openapi/openapi.yaml")

    /// An HTTP method and a path template, spelled the same way by Hummingbird and OpenAPI
    /// (`/v1/apps/{appId}`).
    struct Operation: Hashable, CustomStringConvertible, Comparable {
        var method: String
        var path: String
        var description: String { "\(method.uppercased()) \(path)" }
        static func < (a: Self, b: Self) -> Bool { (a.path, a.method) < (b.path, b.method) }
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

    @Test func theDocumentDescribesExactlyTheRoutersRoutes() async throws {
        try await AccessTestDaemon.run { daemon, _ in
            let registered = Set(daemon.table.all.map { Operation(method: $0.method.rawValue.lowercased(), path: $0.path) })
            let documented = try Self.documentedOperations()
            // Guards against a broken parse making the comparison vacuous.
            #expect(documented.count >= 20, "parsed only \(documented.sorted()) from openapi/openapi.yaml")
            #expect(registered.count >= 20)
            let undocumented = registered.subtracting(documented).sorted()
            #expect(undocumented.isEmpty, "registered but not in openapi/openapi.yaml: \(undocumented)")
            let missing = documented.subtracting(registered).sorted()
            #expect(missing.isEmpty, "documented but no route registers them: \(missing)")
        }
    }
}
