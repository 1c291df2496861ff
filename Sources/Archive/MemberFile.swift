import Crypto
public import Foundation

/// One archive member being generated: appended in pieces to a temporary file while its
/// SHA-256 and size are computed, so the manifest can list them.
///
/// Why a temporary file even for zip, whose data descriptor would allow a member of unknown
/// size: the store's scan cannot wait for a slow client or compressor while it visits a page,
/// so what it produces must go somewhere other than memory; and a tar header states the size
/// before the data. A zip member is compressed while its file grows (`StreamedMember`); a tar
/// member is copied in once complete. Spooling one member at a time to `<data>/tmp/` keeps
/// memory bounded (a 64 KiB write buffer) and disk use bounded by the largest member; the
/// file is deleted as soon as it is in the archive.
///
/// Unchecked `Sendable` so a bundle's producing task can own it: one task writes it at a
/// time, and the only thing another thread sees is the size passed to `onWrite`.
public final class MemberFile: @unchecked Sendable {
    public let name: String
    public let url: URL
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    /// Nil once a follower hashes what it reads back instead (`follow`).
    private var hasher: SHA256? = SHA256()
    public private(set) var size: Int64 = 0
    private var onWrite: (@Sendable (Int64) -> Void)?

    public init(name: String, directory: URL) throws {
        self.name = name
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        url = directory.appendingPathComponent("bundle-\(UUID().uuidString)-\(name)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
            throw ArchiveError.writing("cannot create temporary file \(url.path)")
        }
        handle = try FileHandle(forWritingTo: url)
        buffer.reserveCapacity(1 << 16)
    }

    public func append(_ bytes: [UInt8]) throws {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { try flush() }
    }

    public func append(_ text: String) throws { try append(Array(text.utf8)) }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        hasher?.update(data: buffer)
        size += Int64(buffer.count)
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
        onWrite?(size)
    }

    /// Hands the file to a follower that reads it back while it grows and hashes what it
    /// reads (`StreamedMember`, on its own thread): `written` is told the file's size after
    /// each write, from the writing thread, and this file no longer hashes.
    func follow(_ written: @escaping @Sendable (Int64) -> Void) {
        onWrite = written
        hasher = nil
    }

    /// Writes what is buffered and closes the file.
    func close() throws {
        try flush()
        try handle.close()
    }

    /// Closes the file and returns its manifest line (not for a followed file: its follower
    /// has the digest).
    public func finish() throws -> ManifestFile {
        try close()
        guard let hasher else { throw ArchiveError.writing("\(name) is hashed by its follower") }
        return ManifestFile(name: name, size: size, digest: hasher.finalize())
    }

    public func remove() { try? FileManager.default.removeItem(at: url) }

    public static func digest(_ bytes: [UInt8]) -> String {
        ManifestFile.hex(SHA256.hash(data: bytes))
    }
}

/// A file listed in the manifest: its name in the archive, byte size and SHA-256 (hex).
public struct ManifestFile: Sendable, Hashable, Codable {
    public var name: String
    public var size: Int64
    public var sha256: String

    public init(name: String, size: Int64, sha256: String) {
        self.name = name
        self.size = size
        self.sha256 = sha256
    }

    init(name: String, size: Int64, digest: SHA256.Digest) {
        self.init(name: name, size: size, sha256: Self.hex(digest))
    }

    static func hex(_ digest: SHA256.Digest) -> String { digest.map { String(format: "%02x", $0) }.joined() }
}
