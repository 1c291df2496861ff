public import Foundation

/// Free and total bytes of the filesystem holding a directory.
public struct FilesystemUsage: Sendable, Hashable {
    public var freeBytes: Int64
    public var totalBytes: Int64

    public init(freeBytes: Int64, totalBytes: Int64) {
        self.freeBytes = freeBytes
        self.totalBytes = totalBytes
    }
}

/// Where the disk guard and retention read free space from: the real filesystem in the
/// daemon, a scripted one in tests that must not fill a disk to see retention act.
public protocol FilesystemSpace: Sendable {
    /// The usage of the filesystem holding `directory`, or nil when it cannot be read.
    func usage(of directory: URL) -> FilesystemUsage?
}

/// `statvfs(3)`: the space an unprivileged writer may use (`f_bavail`), as `df` shows it.
public struct StatvfsFilesystemSpace: FilesystemSpace {
    public init() {}

    public func usage(of directory: URL) -> FilesystemUsage? {
        var fs = statvfs()
        guard statvfs(directory.path, &fs) == 0 else { return nil }
        return FilesystemUsage(
            freeBytes: Int64(fs.f_bavail) * Int64(fs.f_frsize), totalBytes: Int64(fs.f_blocks) * Int64(fs.f_frsize))
    }
}
