import Crypto
public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `<data-dir>/pseudonym.key`: the 256-bit HMAC key behind every pseudonym and every journal
/// `MAM_IDENTITY_HASH`. Losing or replacing it silently would change every pseudonym at
/// once — old bundles, journal entries and saved filters would stop lining up with new ones
/// — so a key file that exists but cannot be used stops the daemon instead
/// (`PseudonymKeyError`), and a new key is only ever created where none exists, durably:
/// written to a temporary file, fsync'ed, linked into place (never over a key another start
/// wrote meanwhile) and the directory fsync'ed, so a crash leaves either no key or the whole key.
public enum PseudonymKeyFile {
    public static let keyLength = 32

    /// Loads the key at `path`, creating it (mode 0600) when there is no file at all.
    /// - Throws: `PseudonymKeyError` when the file exists but is unreadable or not exactly
    ///   32 bytes, or when a new key cannot be written durably.
    public static func load(from path: URL) throws -> Pseudonymizer {
        if let key = try readKey(path) { return Pseudonymizer(key: SymmetricKey(data: key)) }
        try create(at: path)
        guard let key = try readKey(path) else {
            throw PseudonymKeyError.cannotCreate(path: path.path, reason: "the new key vanished after it was written")
        }
        return Pseudonymizer(key: SymmetricKey(data: key))
    }

    /// The key bytes, or nil when no file exists.
    static func readKey(_ path: URL) throws -> [UInt8]? {
        let fd = open(path.path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw PseudonymKeyError.unreadable(path: path.path, reason: String(cString: strerror(code)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw PseudonymKeyError.unreadable(path: path.path, reason: String(cString: strerror(errno)))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw PseudonymKeyError.unreadable(path: path.path, reason: "not a regular file")
        }
        // One byte more than a key, so a longer file is noticed without reading all of it.
        var buffer = [UInt8](repeating: 0, count: keyLength + 1)
        var filled = 0
        while filled < buffer.count {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw PseudonymKeyError.unreadable(path: path.path, reason: String(cString: strerror(errno))) }
            if n == 0 { break }
            filled += n
        }
        guard filled == keyLength else {
            throw PseudonymKeyError.wrongLength(path: path.path, bytes: filled == buffer.count ? Int(info.st_size) : filled)
        }
        return Array(buffer.prefix(keyLength))
    }

    static func create(at path: URL) throws {
        let directory = path.deletingLastPathComponent()
        func fail(_ what: String) -> PseudonymKeyError {
            .cannotCreate(path: path.path, reason: "\(what): \(String(cString: strerror(errno)))")
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw PseudonymKeyError.cannotCreate(path: path.path, reason: "\(error)")
        }
        let temporary = directory.appendingPathComponent(".\(path.lastPathComponent).\(UUID().uuidString).tmp").path
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw fail("creating \(temporary)") }
        defer { unlink(temporary) }
        let key = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        let written = key.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == key.count, fchmod(fd, 0o600) == 0, fsync(fd) == 0 else {
            let error = fail("writing \(temporary)")
            close(fd)
            throw error
        }
        guard close(fd) == 0 else { throw fail("closing \(temporary)") }
        // link(2) publishes atomically and refuses to replace: if another start created a key
        // meanwhile, that one is kept and loaded. Where hard links are unsupported, rename(2).
        if link(temporary, path.path) != 0 {
            let code = errno
            if code != EEXIST {
                guard rename(temporary, path.path) == 0 else { throw fail("renaming \(temporary) into place") }
            }
        }
        let dirfd = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dirfd >= 0 else { throw fail("opening \(directory.path)") }
        defer { close(dirfd) }
        guard fsync(dirfd) == 0 else { throw fail("syncing \(directory.path)") }
    }
}

/// Why the pseudonym key cannot be used; the daemon refuses to start on any of these, with
/// `exitCode`, rather than making up a key that would change every pseudonym.
public enum PseudonymKeyError: Error, CustomStringConvertible, Equatable {
    case unreadable(path: String, reason: String)
    case wrongLength(path: String, bytes: Int)
    case cannotCreate(path: String, reason: String)

    /// 65 (`EX_DATAERR`) for a damaged key, 73 (`EX_CANTCREAT`) when a new one cannot be written.
    public var exitCode: Int32 {
        if case .cannotCreate = self { return 73 }
        return 65
    }

    public var description: String {
        let advice =
            "restore it from a backup; only if it is lost for good, move it away so a new key is made (every pseudonym and journal MAM_IDENTITY_HASH then changes)"
        switch self {
        case .unreadable(let path, let reason):
            return "pseudonym key \(path) cannot be read (\(reason)); refusing to start: \(advice)"
        case .wrongLength(let path, let bytes):
            return
                "pseudonym key \(path) holds \(bytes) bytes, not \(PseudonymKeyFile.keyLength): it is damaged; refusing to start: \(advice)"
        case .cannotCreate(let path, let reason):
            return "cannot create the pseudonym key \(path): \(reason)"
        }
    }
}
