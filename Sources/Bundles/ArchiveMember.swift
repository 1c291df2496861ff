import Archive
import Foundation

/// Puts one spooled member into a bundle's archive and its bytes into the sink.
///
/// zip: the member is compressed by a `StreamedMember` while `produce` is still writing its
/// file, and the archive's output is sent to the sink as it comes, concurrently with the
/// producer (a task of its own): the store scan and the deflate each get a core.
/// tar.gz: `produce` runs first, then the complete file is copied in, since a tar header
/// states the size before the data.
enum ArchiveMember {
    static func write<S: BundleSink>(
        _ file: MemberFile, into archive: ArchiveWriter, sink: inout S,
        while produce: @escaping @Sendable () async throws -> Void = {}
    ) async throws -> ManifestFile {
        defer { file.remove() }
        guard archive.format.streamsMembers else {
            try await produce()
            return try await copy(file, into: archive, sink: &sink)
        }
        let member = try StreamedMember(file: file, archive: archive)
        return try await withThrowingTaskGroup(of: Void.self, returning: ManifestFile.self) { group in
            group.addTask {
                do {
                    try await produce()
                    try member.finishWriting()
                } catch {
                    member.abandon()
                    throw error
                }
            }
            do {
                for await piece in member.output {
                    member.took()
                    try await sink.write(piece)
                }
            } catch {
                // The client is gone: stop the compressor; leaving the group cancels the producer.
                member.abandon()
                throw error
            }
            // The output ended. If that was this task's cancellation rather than the end of the
            // member, the compressor may be waiting for a consumer that is gone: release it.
            member.abandon()
            try await group.next()  // the producer's failure first: it is the cause
            return try member.finish()
        }
    }

    /// The tar path: the finished file copied into the archive in 64 KiB reads.
    private static func copy<S: BundleSink>(_ file: MemberFile, into archive: ArchiveWriter, sink: inout S) async throws
        -> ManifestFile
    {
        let entry = try file.finish()
        try archive.beginEntry(name: entry.name, size: entry.size)
        let input = try FileHandle(forReadingFrom: file.url)
        defer { try? input.close() }
        while let chunk = try input.read(upToCount: 1 << 16), !chunk.isEmpty {
            try chunk.withUnsafeBytes { try archive.writeData($0) }
            try await drain(archive, into: &sink)
        }
        try archive.finishEntry()
        try await drain(archive, into: &sink)
        return entry
    }

    /// Hands the sink what the archive has produced since the last call.
    static func drain<S: BundleSink>(_ archive: ArchiveWriter, into sink: inout S) async throws {
        let out = archive.takeOutput()
        if !out.isEmpty { try await sink.write(out) }
    }
}
