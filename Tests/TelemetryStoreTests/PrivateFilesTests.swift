import ControlState
import Foundation
import Metrics
import StoreCore
import TelemetryModel
import Testing

@testable import TelemetryStore

/// Everything the store and the control database create under the data directory is
/// owner-only (0600 files, 0700 directories) when the process runs with the usual umask
/// 022, which left `records.sqlite` and `control.sqlite` world-readable.
@Suite(.serialized) struct PrivateFilesTests {
    /// Every file and directory under `root`, with its permission bits.
    static func modes(under root: URL) -> [(path: String, mode: mode_t, directory: Bool)] {
        var out: [(String, mode_t, Bool)] = []
        var pending = [root.path]
        while let path = pending.popLast() {
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let isDirectory = info.st_mode & S_IFMT == S_IFDIR
            out.append((path, info.st_mode & 0o7777, isDirectory))
            if isDirectory {
                for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] { pending.append(path + "/" + name) }
            }
        }
        return out
    }

    static func expectOwnerOnly(under root: URL) {
        for entry in modes(under: root) {
            #expect(entry.mode & 0o077 == 0, "\(entry.path) is \(String(entry.mode, radix: 8))")
        }
    }

    @Test func theStoresAndTheControlDatabaseAreOwnerOnlyUnderUmask022() async throws {
        let previous = umask(0o022)
        defer { umask(previous) }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("private-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let data = root.appendingPathComponent("data")
        let store = try SQLiteRecordStore(directory: data, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
        let committer = Task { try await store.committer.run() }
        let records = (0..<50).map { StoreFixture.event(identity: "jane@contoso.com", time: Int64($0)) }
        _ = try await store.append(AppendRequest(kind: .event, receivedAt: 1, records: [.prod: records, .ppe: records]))
        let control = try ControlDatabase.open(directory: data)
        _ = try await TokenStore(control: control).create(name: "t", scopes: [.read], apps: [], now: 0)

        let names = Set(Self.modes(under: data).map { URL(fileURLWithPath: $0.path).lastPathComponent })
        for name in ["records.sqlite", "records.sqlite-wal", "records.sqlite-shm", "control.sqlite", "control.sqlite-wal"] {
            #expect(names.contains(name), "\(name) was not created: \(names.sorted())")
        }
        Self.expectOwnerOnly(under: data)
        await store.committer.close()
        committer.cancel()
    }

    /// A data directory written by an older version, world-readable, is narrowed when opened.
    @Test func anOlderWorldReadableStoreIsNarrowedWhenOpened() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("private-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let prod = root.appendingPathComponent("prod")
        try FileManager.default.createDirectory(at: prod, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        for name in ["records.sqlite", "records.sqlite-wal", "records.sqlite-shm"] {
            #expect(FileManager.default.createFile(atPath: prod.appendingPathComponent(name).path, contents: nil))
            #expect(chmod(prod.appendingPathComponent(name).path, 0o644) == 0)
        }
        for path in [root.path, prod.path] { #expect(chmod(path, 0o755) == 0) }
        let store = try SQLiteRecordStore(directory: root, clock: SystemWallClock(), metrics: NOOPMetricsHandler.instance)
        for entry in Self.modes(under: root) where entry.path != root.path {
            #expect(entry.mode & 0o077 == 0, "\(entry.path) is \(String(entry.mode, radix: 8))")
        }
        // The data directory itself belongs to whoever made it (systemd's StateDirectoryMode=).
        #expect(Self.modes(under: root).first { $0.path == root.path }?.mode == 0o755)
        _ = store
    }
}
