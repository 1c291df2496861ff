/// The container a diagnostic bundle is delivered in: zip (what support desks open by
/// double-click) or tar.gz (what Linux tools stream).
public enum ArchiveFormat: String, Sendable, Hashable, CaseIterable {
    case zip
    case tarGz = "tar.gz"

    public var fileExtension: String { rawValue }
    public var contentType: String { self == .zip ? "application/zip" : "application/gzip" }
    /// Whether a member can be written before its size is known: zip puts sizes and CRC in a
    /// data descriptor after the data; a tar header states the size before it.
    public var streamsMembers: Bool { self == .zip }
}

/// Why an archive could not be written or did not verify.
public enum ArchiveError: Error, Sendable, Hashable, CustomStringConvertible {
    /// libarchive or the spool file failed while writing.
    case writing(String)
    /// A member is missing, extra, or its size or SHA-256 differs from the manifest.
    case verification(String)

    public var description: String {
        switch self {
        case .writing(let m): "archive: \(m)"
        case .verification(let m): "verification failed: \(m)"
        }
    }
}
