import CArchive
import Foundation

/// A libarchive streaming writer whose output is collected by the write callback into a
/// small buffer that the (async) caller drains after every call, so bytes reach the client
/// while the archive is still being built and never accumulate beyond one call's output.
public final class ArchiveWriter {
    /// Filled by libarchive's write callback; drained by `takeOutput()`.
    final class Output {
        var bytes: [UInt8] = []
    }

    /// Deflate level of the members. A bundle is built while a support engineer waits and is
    /// read once: at level 6 (libarchive's default) compressing took most of the time of a
    /// large bundle; level 1 is several times faster for a somewhat larger file.
    static let compressionLevel = 1

    public let format: ArchiveFormat
    private let archive: OpaquePointer
    private let output = Output()
    private var closed = false
    private let modificationTime: Int64

    public init(format: ArchiveFormat, modificationTime ms: Int64) throws {
        guard let a = archive_write_new() else { throw ArchiveError.writing("archive_write_new failed") }
        archive = a
        self.format = format
        modificationTime = ms / 1000
        switch format {
        case .zip:
            try check(archive_write_set_format_zip(a), "set_format_zip")
            try check(archive_write_set_options(a, "zip:compression-level=\(Self.compressionLevel)"), "zip compression level")
        case .tarGz:
            try check(archive_write_set_format_pax_restricted(a), "set_format_pax_restricted")
            try check(archive_write_add_filter_gzip(a), "add_filter_gzip")
            try check(archive_write_set_options(a, "gzip:compression-level=\(Self.compressionLevel)"), "gzip compression level")
        }
        // No padding of the last block: the stream ends where the data ends.
        try check(archive_write_set_bytes_in_last_block(a, 1), "set_bytes_in_last_block")
        let context = Unmanaged.passUnretained(output).toOpaque()
        try check(
            archive_write_open(
                a, context, nil,
                { _, context, buffer, length in
                    guard let context, let buffer else { return -1 }
                    let out = Unmanaged<ArchiveWriter.Output>.fromOpaque(context).takeUnretainedValue()
                    out.bytes.append(contentsOf: UnsafeRawBufferPointer(start: buffer, count: length))
                    return length
                }, nil), "open")
    }

    deinit {
        if !closed { archive_write_close(archive) }
        archive_write_free(archive)
    }

    private func check(_ status: Int32, _ what: String) throws {
        guard status >= ARCHIVE_WARN else {
            let message = archive_error_string(archive).map { String(cString: $0) } ?? "error \(status)"
            throw ArchiveError.writing("\(what): \(message)")
        }
    }

    /// Bytes produced since the last call.
    public func takeOutput() -> [UInt8] {
        defer { output.bytes.removeAll(keepingCapacity: true) }
        return output.bytes
    }

    /// Starts a member. A nil `size` (zip only) writes the sizes and CRC after the data, in a
    /// data descriptor, so a member can be compressed while it is still being generated.
    public func beginEntry(name: String, size: Int64?) throws {
        guard size != nil || format.streamsMembers else {
            throw ArchiveError.writing("\(format.rawValue) needs the size of \(name) before its data")
        }
        guard let entry = archive_entry_new() else { throw ArchiveError.writing("archive_entry_new failed") }
        defer { archive_entry_free(entry) }
        archive_entry_set_pathname(entry, name)
        if let size { archive_entry_set_size(entry, size) }
        archive_entry_set_filetype(entry, 0o100000)
        archive_entry_set_perm(entry, 0o644)
        archive_entry_set_mtime(entry, time_t(modificationTime), 0)
        try check(archive_write_header(archive, entry), "write_header \(name)")
    }

    public func writeData(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let n = archive_write_data(archive, base, bytes.count)
        guard n >= 0 else {
            throw ArchiveError.writing(archive_error_string(archive).map { String(cString: $0) } ?? "write_data failed")
        }
    }

    public func finishEntry() throws { try check(archive_write_finish_entry(archive), "finish_entry") }

    public func close() throws {
        closed = true
        try check(archive_write_close(archive), "close")
    }
}
