public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// What the daemon keeps under its data directory is its own: owner-only files (0600) and
/// directories (0700), whatever umask it was started with. The stores hold UPNs, device ids
/// and verbose text, the control database holds token hashes; started by hand with the
/// usual umask 022, SQLite would make them world-readable (it creates a database 0644 less
/// the umask, and its `-wal` and `-shm` files with the database's mode). No group needs them:
/// clients reach the daemon over HTTP, never through its files.
///
/// The modes are set explicitly (a umask can only take bits away), and files and
/// directories of an older version that are wider than this are narrowed when opened.
public enum PrivateFiles {
    public static let fileMode: mode_t = 0o600
    public static let directoryMode: mode_t = 0o700

    /// Creates `directory` and its missing parents owner-only; a directory that already
    /// exists keeps its mode unless `narrowing` (directories the daemon owns, not the data
    /// directory an operator or systemd made).
    public static func directory(_ directory: URL, narrowing: Bool = true) throws {
        let path = directory.path
        var info = stat()
        if stat(path, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else { throw PrivateFileError(path: path, errno: ENOTDIR) }
            if narrowing { try narrow(path, to: directoryMode, from: info.st_mode) }
            return
        }
        let parent = directory.deletingLastPathComponent()
        if parent.path != path { try self.directory(parent, narrowing: false) }
        guard mkdir(path, directoryMode) == 0 || errno == EEXIST else { throw PrivateFileError(path: path, errno: errno) }
        guard chmod(path, directoryMode) == 0 else { throw PrivateFileError(path: path, errno: errno) }
    }

    /// Makes sure the SQLite database at `path` exists owner-only before SQLite opens it, so
    /// its `-wal` and `-shm` files, which SQLite creates with the database's mode, are too.
    /// An existing database and its side files are narrowed.
    public static func database(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, fileMode)
        guard fd >= 0 else { throw PrivateFileError(path: path, errno: errno) }
        let changed = fchmod(fd, fileMode)
        let failure = errno
        close(fd)
        guard changed == 0 else { throw PrivateFileError(path: path, errno: failure) }
        for side in ["-wal", "-shm", "-journal"] {
            var info = stat()
            if stat(path + side, &info) == 0 { try narrow(path + side, to: fileMode, from: info.st_mode) }
        }
    }

    /// Writes a new owner-only file at `path` (replacing one that is there): created 0600,
    /// never readable by others for a moment.
    public static func createFile(_ path: String, contents bytes: [UInt8]) throws {
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        guard fd >= 0 else { throw PrivateFileError(path: path, errno: errno) }
        defer { close(fd) }
        guard fchmod(fd, fileMode) == 0 else { throw PrivateFileError(path: path, errno: errno) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw PrivateFileError(path: path, errno: errno) }
            written += n
        }
    }

    /// Takes away every permission bit beyond `mode`.
    private static func narrow(_ path: String, to mode: mode_t, from current: mode_t) throws {
        let permissions = current & 0o7777
        guard permissions & ~mode != 0 else { return }
        guard chmod(path, permissions & mode) == 0 else { throw PrivateFileError(path: path, errno: errno) }
    }
}

/// A file or directory under the data directory could not be made private.
public struct PrivateFileError: Error, CustomStringConvertible {
    public let path: String
    public let errno: Int32

    public var description: String { "\(path) cannot be made owner-only: \(String(cString: strerror(errno)))" }
}
