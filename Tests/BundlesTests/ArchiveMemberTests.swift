import Archive
import Crypto
import Foundation
import Testing

@testable import Bundles

/// `ArchiveMember`: a member written while it is produced (zip, compressed beside the
/// producer) or after (tar.gz, copied), and what happens when either end fails.
struct ArchiveMemberTests {
    struct Collected: BundleSink {
        var bytes: [UInt8] = []
        var writes = 0
        /// Throws on this write (1-based): the client went away.
        var failOnWrite: Int?
        /// Sleeps this long per write: a slow client.
        var delay: Duration = .zero

        mutating func write(_ chunk: [UInt8]) async throws {
            writes += 1
            if let failOnWrite, writes >= failOnWrite { throw ClientGone() }
            // A write that completes even when the request is cancelled, as a socket write does.
            if delay > .zero { try? await Task.sleep(for: delay) }
            bytes += chunk
        }
    }

    struct ClientGone: Error {}
    struct ScanFailed: Error {}

    /// Pieces from 1 byte to 300 KiB, text and random bytes, so both tiny appends and reads
    /// of the file larger than the compressor's read size happen.
    static func pieces() -> [[UInt8]] {
        var random = SystemRandomNumberGenerator()
        return (0..<120).map { i in
            let n = [1, 17, 4_096, 65_535, 65_537, 300_000][i % 6]
            return i % 2 == 0
                ? Array(String(repeating: "{\"line\":\(i)}\n", count: n / 12 + 1).utf8.prefix(n))
                : (0..<n).map { _ in UInt8.random(in: 0...255, using: &random) }
        }
    }

    func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("archive-member-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test(arguments: [ArchiveFormat.zip, .tarGz])
    func memberWrittenWhileProducedVerifiesAgainstItsManifestLine(format: ArchiveFormat) async throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let pieces = Self.pieces()
        var expected = SHA256()
        for p in pieces { expected.update(data: p) }
        let archive = try ArchiveWriter(format: format, modificationTime: 0)
        let file = try MemberFile(name: "telemetry.ndjson", directory: dir)
        var sink = Collected(delay: .milliseconds(2))
        let entry = try await ArchiveMember.write(file, into: archive, sink: &sink) {
            for (i, p) in pieces.enumerated() {
                try file.append(p)
                if i % 10 == 0 { await Task.yield() }
            }
        }
        #expect(entry.size == Int64(pieces.reduce(0) { $0 + $1.count }))
        #expect(entry.sha256 == expected.finalize().map { String(format: "%02x", $0) }.joined())
        #expect(!FileManager.default.fileExists(atPath: file.url.path), "the spool file is removed")

        // The archive is whole: a second member after it, a manifest, and libarchive re-reads
        // every byte against the SHA-256 the member reported.
        let note = try MemberFile(name: "timeline.txt", directory: dir)
        try note.append("after the streamed member\n")
        let second = try await ArchiveMember.write(note, into: archive, sink: &sink)
        let manifest = try JSONSerialization.data(withJSONObject: [
            "files": [entry, second].map { ["name": $0.name, "size": $0.size, "sha256": $0.sha256] as [String: Any] }
        ])
        try archive.beginEntry(name: "manifest.json", size: Int64(manifest.count))
        try manifest.withUnsafeBytes { try archive.writeData($0) }
        try archive.finishEntry()
        try archive.close()
        sink.bytes += archive.takeOutput()
        let path = dir.appendingPathComponent("bundle.\(format.fileExtension)").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(sink.bytes)))
        let result = try BundleVerifier.verify(archiveAt: path)
        #expect(result.ok, "\(result.problems)")
        #expect(Set(result.verified.map(\.name)) == ["telemetry.ndjson", "timeline.txt"])
        if format == .zip {
            #expect(try run(["/usr/bin/unzip", "-t", path]).status == 0)
        }
    }

    @Test func clientGoingAwayEndsTheMemberAndStopsTheProducer() async throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let archive = try ArchiveWriter(format: .zip, modificationTime: 0)
        let file = try MemberFile(name: "telemetry.ndjson", directory: dir)
        let pieces = Self.pieces()
        var sink = Collected(failOnWrite: 3)
        let produced = Counter()
        await #expect(throws: ClientGone.self) {
            try await ArchiveMember.write(file, into: archive, sink: &sink) {
                // A producer as long as the store's scan: it stops at the cancellation check
                // between pages.
                for round in 0..<1_000 {
                    for p in pieces { try file.append(p) }
                    produced.set(round)
                    try Task.checkCancellation()
                }
            }
        }
        #expect(produced.value < 999, "the producer was cancelled, not run to the end")
        #expect(!FileManager.default.fileExists(atPath: file.url.path))
    }

    /// Threads compressing a member named `cancelled.ndjson` (their names are `zip ` and the
    /// member's, cut to 15 characters), alive in this process.
    static func compressorThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.hasPrefix("zip cancelled.n") == true
        }.count
    }

    @Test func cancelledRequestLeavesNoCompressorBehind() async throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let pieces = Self.pieces()
        // A slow client whose request is cancelled mid-member, and a producer that never looks
        // at cancellation and runs to its end: the compressor, left with output nobody takes,
        // must still stop.
        let request = Task {
            let archive = try ArchiveWriter(format: .zip, modificationTime: 0)
            let file = try MemberFile(name: "cancelled.ndjson", directory: dir)
            var sink = Collected(delay: .milliseconds(20))
            return try await ArchiveMember.write(file, into: archive, sink: &sink) {
                for _ in 0..<8 { for p in pieces { try file.append(p) } }
            }
        }
        for _ in 0..<200 where Self.compressorThreads() == 0 { try await Task.sleep(for: .milliseconds(50)) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(Self.compressorThreads() == 1, "the member is being compressed when the request is cancelled")
        request.cancel()
        let outcome = await request.result
        #expect(throws: (any Error).self) { try outcome.get() }
        var left = Self.compressorThreads()
        for _ in 0..<50 where left > 0 {
            try await Task.sleep(for: .milliseconds(100))
            left = Self.compressorThreads()
        }
        #expect(left == 0, "a compressor thread outlived its cancelled request")
    }

    @Test func producerFailureIsTheErrorReported() async throws {
        let dir = try directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let archive = try ArchiveWriter(format: .zip, modificationTime: 0)
        let file = try MemberFile(name: "logs.ndjson", directory: dir)
        var sink = Collected()
        await #expect(throws: ScanFailed.self) {
            try await ArchiveMember.write(file, into: archive, sink: &sink) {
                for p in Self.pieces() { try file.append(p) }
                throw ScanFailed()
            }
        }
    }

    @Test func tarNeedsTheSizeFirst() throws {
        let archive = try ArchiveWriter(format: .tarGz, modificationTime: 0)
        #expect(throws: ArchiveError.writing("tar.gz needs the size of x.ndjson before its data")) {
            try archive.beginEntry(name: "x.ndjson", size: nil)
        }
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var stored = -1
        var value: Int { lock.withLock { stored } }
        func set(_ v: Int) { lock.withLock { stored = v } }
    }
}
