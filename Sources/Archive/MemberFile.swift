import Crypto
import Foundation

/// One archive member being generated: appended in pieces to a temporary file while its
/// SHA-256 and size are computed, so the manifest can list them and the archive entry can
/// carry its size up front.
///
/// Why a temporary file rather than zip's data-descriptor mode: tar headers must state the
/// size before the data, and a bundle must work for both formats. Spooling one member at a
/// time to `<data>/tmp/` keeps memory bounded (a 64 KiB write buffer) and disk use bounded
/// by the largest member; the file is deleted as soon as it has been copied into the archive.
public final class MemberFile {
    public let name: String
    public let url: URL
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var hasher = SHA256()
    public private(set) var size: Int64 = 0

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
        hasher.update(data: buffer)
        size += Int64(buffer.count)
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Closes the file and returns its manifest line.
    public func finish() throws -> ManifestFile {
        try flush()
        try handle.close()
        return ManifestFile(name: name, size: size, sha256: hasher.finalize().map { String(format: "%02x", $0) }.joined())
    }

    public func remove() { try? FileManager.default.removeItem(at: url) }

    public static func digest(_ bytes: [UInt8]) -> String {
        SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
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
}
