import Foundation
import TestSupport

/// A tmpfs of a few MiB mounted for one test (this test process runs in a private mount
/// namespace under `inwt`, and the mount is lazily detached at the end either way), so a
/// test can fill a disk without touching a real one.
struct SmallDisk {
    let mountPoint: URL

    /// Mounts a fresh tmpfs of `megabytes` MiB; needs root.
    init(megabytes: Int) throws {
        mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("mamtd-tmpfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", mountPoint.path]) == 0 else {
            try? FileManager.default.removeItem(at: mountPoint)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "mount tmpfs failed"])
        }
    }

    /// Bytes an unprivileged writer may still use.
    var freeBytes: Int {
        var fs = statvfs()
        guard statvfs(mountPoint.path, &fs) == 0 else { return -1 }
        return Int(fs.f_bavail) * Int(fs.f_frsize)
    }

    func unmount() {
        _ = Self.run("/bin/umount", ["-l", mountPoint.path])
        try? FileManager.default.removeItem(at: mountPoint)
    }

    static func run(_ tool: String, _ args: [String]) -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return -1 }
        p.waitUntilExit()
        return p.terminationStatus
    }
}
