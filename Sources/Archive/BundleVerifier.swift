import CArchive
import Crypto
import Foundation

/// Re-reads a bundle archive (zip or tar.gz, with libarchive's read API) and checks every
/// file against the SHA-256 and size listed in its `manifest.json` — what the CLI does after
/// a download and what `mamtelemetryctl bundle verify` does for an archive received later.
public enum BundleVerifier {
    public struct Result: Sendable {
        /// The manifest as found in the archive (parse it for counts, window, redaction).
        public var manifest: [UInt8]
        /// Files whose checksum and size matched.
        public var verified: [ManifestFile]
        /// Human-readable mismatches; empty when the archive is intact.
        public var problems: [String]
        public var ok: Bool { problems.isEmpty }
    }

    public static func verify(archiveAt path: String) throws -> Result {
        guard let a = archive_read_new() else { throw ArchiveError.writing("archive_read_new failed") }
        defer { archive_read_free(a) }
        archive_read_support_format_all(a)
        archive_read_support_filter_all(a)
        guard archive_read_open_filename(a, path, 1 << 16) == ARCHIVE_OK else {
            throw ArchiveError.verification(archive_error_string(a).map { String(cString: $0) } ?? "cannot open \(path)")
        }
        var seen: [String: ManifestFile] = [:]
        var manifest: [UInt8]?
        var entry: OpaquePointer?
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let status = archive_read_next_header(a, &entry)
            if status == ARCHIVE_EOF { break }
            guard status >= ARCHIVE_WARN, let entry else {
                throw ArchiveError.verification(archive_error_string(a).map { String(cString: $0) } ?? "corrupt archive")
            }
            let name = archive_entry_pathname(entry).map { String(cString: $0) } ?? ""
            var hasher = SHA256()
            var size: Int64 = 0
            var keep: [UInt8]? = name == "manifest.json" ? [] : nil
            while true {
                let n = buffer.withUnsafeMutableBytes { archive_read_data(a, $0.baseAddress, $0.count) }
                if n == 0 { break }
                guard n > 0 else {
                    throw ArchiveError.verification(archive_error_string(a).map { String(cString: $0) } ?? "read error in \(name)")
                }
                buffer.withUnsafeBytes { hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                if keep != nil { keep!.append(contentsOf: buffer[0..<n]) }
                size += Int64(n)
            }
            if let keep { manifest = keep }
            seen[name] = ManifestFile(name: name, size: size, sha256: hasher.finalize().map { String(format: "%02x", $0) }.joined())
        }
        guard let manifest else { throw ArchiveError.verification("no manifest.json in the archive") }
        guard let object = try JSONSerialization.jsonObject(with: Data(manifest)) as? [String: Any],
            let files = object["files"] as? [[String: Any]]
        else { throw ArchiveError.verification("manifest.json has no files list") }
        var problems: [String] = []
        var verified: [ManifestFile] = []
        var listed = Set<String>()
        for f in files {
            let name = f["name"] as? String ?? ""
            listed.insert(name)
            let size = (f["size"] as? NSNumber)?.int64Value ?? -1
            let sha = f["sha256"] as? String ?? ""
            guard let actual = seen[name] else {
                problems.append("\(name): listed in the manifest but missing from the archive")
                continue
            }
            if actual.size != size { problems.append("\(name): size \(actual.size), manifest says \(size)") }
            if actual.sha256 != sha { problems.append("\(name): SHA-256 \(actual.sha256), manifest says \(sha)") }
            if actual.size == size && actual.sha256 == sha { verified.append(actual) }
        }
        for name in seen.keys.sorted() where name != "manifest.json" && !listed.contains(name) {
            problems.append("\(name): in the archive but not listed in the manifest")
        }
        return Result(manifest: manifest, verified: verified, problems: problems)
    }
}
