import Foundation

/// A tmpfs of a few MiB mounted for one test (lazily detached at the end), so a test can
/// fill a disk without touching a real one: the daemon's refusals at the high-water mark
/// (a process) and the store's answers when a write meets a full disk (in process).
public struct SmallDisk: Sendable {
    public let mountPoint: URL

    /// Mounts a fresh tmpfs of `megabytes` MiB; needs root.
    public init(megabytes: Int) throws {
        mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent("mamtd-tmpfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        guard Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", mountPoint.path]) == 0 else {
            try? FileManager.default.removeItem(at: mountPoint)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "mount tmpfs failed"])
        }
    }

    /// Bytes an unprivileged writer may still use.
    public var freeBytes: Int {
        var fs = statvfs()
        guard statvfs(mountPoint.path, &fs) == 0 else { return -1 }
        return Int(fs.f_bavail) * Int(fs.f_frsize)
    }

    /// Takes all but `leaving` bytes of the disk in one new file, as another program filling
    /// it would: one `posix_fallocate`, so no check of the daemon sees it half written. The
    /// daemon under test may write between reading the free space and allocating (a WAL page,
    /// a checkpoint); an allocation that no longer fits is tried again, from an empty file,
    /// with what is free then.
    @discardableResult
    public func fill(leaving: Int, name: String = "ballast") throws -> URL {
        let url = mountPoint.appendingPathComponent(name)
        let fd = open(url.path, O_CREAT | O_WRONLY, 0o600)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var result = ENOSPC
        for _ in 0..<50 where result == ENOSPC {
            _ = ftruncate(fd, 0)
            result = posix_fallocate(fd, 0, off_t(max(1, freeBytes - leaving)))
        }
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        return url
    }

    public func unmount() {
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
