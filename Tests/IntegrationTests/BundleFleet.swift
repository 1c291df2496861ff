import Foundation
import TestSupport
import Testing

/// `BundleFleetFixture` on a daemon process, for `mamtelemetryctl` end to end: the daemon,
/// the fleet stored in it, and a working directory for the CLI. The process suites also call
/// the system-tool helpers by this name (`BundleFleet.system`, `.unpack`).
final class BundleFleet: @unchecked Sendable {
    typealias Run = SystemCommand.Output
    typealias Fixture = BundleFleetFixture

    static var cli: URL { ControlProcess.binary }

    /// The fleet of the running suite (`.fleetDaemon`).
    @TaskLocal static var shared: BundleFleet?

    let daemon: DaemonProcess
    let fixture: Fixture
    let workDirectory: URL

    private init(daemon: DaemonProcess, fixture: Fixture) throws {
        self.daemon = daemon
        self.fixture = fixture
        workDirectory = daemon.dataDirectory.deletingLastPathComponent().appendingPathComponent("bundle-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    static func start() async throws -> BundleFleet {
        let daemon = try DaemonProcess()
        do {
            try await daemon.start()
            return try BundleFleet(daemon: daemon, fixture: try await Fixture.store(through: daemon))
        } catch {
            daemon.cleanUp()
            throw error
        }
    }

    func cleanUp() {
        daemon.cleanUp()
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// Record ids the query API returns for a filter (admin token).
    func ids(_ path: String, member: String) async throws -> Set<String> {
        try await Fixture.ids(path, member: member, through: daemon)
    }

    /// Runs the built CLI against this daemon (its URL is added), in `directory` or the work directory.
    func ctl(_ arguments: [String], in directory: URL? = nil) throws -> Run {
        let needsServer = arguments.first == "bundle" && arguments.dropFirst().first != "verify"
        return try Self.system(Self.cli.path, arguments + (needsServer ? ["--url", daemon.baseURL] : []), in: directory ?? workDirectory)
    }

    struct Downloaded {
        var path: String
        var stdout: String
        var members: [String: [UInt8]]
    }

    /// `mamtelemetryctl bundle <scope> -o NAME --token T`, which must succeed; then unpacked with the system's tools.
    func download(_ scope: [String], token: String, name: String) throws -> Downloaded {
        let path = workDirectory.appendingPathComponent(name).path
        let run = try ctl(["bundle"] + scope + ["-o", path, "--token", token])
        guard run.status == 0 else { throw Fixture.SetupError.refused("bundle \(scope) exited \(run.status): \(run.stderr)") }
        return Downloaded(path: path, stdout: run.stdout, members: try Self.unpack(path))
    }

    static func system(_ tool: String, _ arguments: [String], in directory: URL? = nil, environment: [String: String] = [:]) throws -> Run {
        try SystemCommand.run(tool, arguments, in: directory, environment: environment)
    }

    static func unpack(_ archive: String) throws -> [String: [UInt8]] { try SystemCommand.unpack(archive) }
    static func recordID(_ record: [String: Any]) -> String? { Fixture.recordID(record) }
    static func lines(_ ndjson: [UInt8]?) -> [[String: Any]] { Fixture.lines(ndjson) }
}

/// One daemon for a whole suite, started and filled with the fleet once; its tests read it
/// through `BundleFleet.shared` and store anything else under devices of their own.
struct FleetDaemonTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let fleet = try await BundleFleet.start()
        defer { fleet.cleanUp() }
        try await BundleFleet.$shared.withValue(fleet) { try await function() }
    }
}

extension Trait where Self == FleetDaemonTrait {
    static var fleetDaemon: Self { Self() }
}
