import Crypto
import Foundation

/// A zip member compressed into the archive by its own thread while its spool file
/// (`MemberFile`) is still being written, so deflating it (about 40% of a large bundle's CPU)
/// runs on the second core beside the store scan and redaction that produce it, instead of
/// after them.
///
/// The compressor follows the file as it grows and hands each piece of archive output to
/// `output`, whose consumer sends it to the client. Nothing here can make the producer wait:
/// the file absorbs any lead it takes. The compressor waits instead, when `backlog` pieces are
/// out and not yet taken, so a slow client holds memory to a few pieces. The archive writer
/// belongs to the compressor from `init` until `output` ends.
public final class StreamedMember: @unchecked Sendable {
    /// Pieces of archive output handed out and not yet taken before the compressor waits.
    public static let backlog = 4
    /// Bytes of the spool file read and compressed at a time.
    static let readSize = 1 << 20

    public let name: String
    /// The archive's bytes for this member, in order; ends when the member is complete in the
    /// archive, or abandoned, or failed (see `finish`).
    public let output: AsyncStream<[UInt8]>
    private let continuation: AsyncStream<[UInt8]>.Continuation
    private let archive: ArchiveWriter
    private let file: MemberFile
    private let reader: FileHandle
    /// What the producer, the compressor and the consumer tell each other; guarded by `signal`.
    private struct Shared {
        var written: Int64 = 0
        var complete = false
        var abandoned = false
        var outstanding = 0
        var failure: (any Error)?
        /// Set by the compressor once the entry is complete.
        var digest: SHA256.Digest?
    }
    private var shared = Shared()
    private let signal = NSCondition()

    /// Starts the entry and the compressor; `file` must be empty and written only by the caller.
    public init(file: MemberFile, archive: ArchiveWriter) throws {
        name = file.name
        self.file = file
        self.archive = archive
        reader = try FileHandle(forReadingFrom: file.url)
        (output, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
        try archive.beginEntry(name: name, size: nil)
        file.follow { [signal, weak self] size in
            signal.lock()
            self?.shared.written = size
            signal.broadcast()
            signal.unlock()
        }
        let threadName = String("zip \(name)".prefix(15))
        Thread { [self] in
            // `top -H` shows which member is being compressed (the kernel keeps 15
            // characters). Named from inside through /proc: Foundation does not name a Linux
            // thread, and `pthread_setname_np` is not visible to Swift.
            try? Data(threadName.utf8).write(to: URL(fileURLWithPath: "/proc/thread-self/comm"))
            compress()
        }.start()
    }

    /// The producer is done: the compressor reads the rest of the file and ends the entry.
    public func finishWriting() throws {
        do { try file.close() } catch {
            abandon()
            throw error
        }
        update { $0.complete = true }
    }

    /// Called by the consumer after it takes each piece of `output`.
    public func took() { update { $0.outstanding -= 1 } }

    /// Stops the compressor (the client went away or the producer failed); `output` ends.
    /// After the member is complete this changes nothing.
    public func abandon() { update { $0.abandoned = true } }

    /// After `output` ended: the member's manifest line (the size and SHA-256 of the bytes
    /// the compressor read back, which are the bytes written), or the compressor's failure.
    public func finish() throws -> ManifestFile {
        try update { s in
            if let failure = s.failure { throw failure }
            guard let digest = s.digest else {
                throw ArchiveError.writing("\(name) was abandoned before it was complete")
            }
            return ManifestFile(name: name, size: s.written, digest: digest)
        }
    }

    private func update<T>(_ change: (inout Shared) throws -> T) rethrows -> T {
        signal.lock()
        defer {
            signal.broadcast()
            signal.unlock()
        }
        return try change(&shared)
    }

    private func compress() {
        defer {
            try? reader.close()
            continuation.finish()
        }
        var done: Int64 = 0
        var hasher = SHA256()
        do {
            while true {
                signal.lock()
                while !shared.abandoned && shared.written == done && !shared.complete { signal.wait() }
                let (written, complete, abandoned) = (shared.written, shared.complete, shared.abandoned)
                signal.unlock()
                if abandoned { return }
                if written > done {
                    let piece = try reader.read(upToCount: Int(min(written - done, Int64(Self.readSize)))) ?? Data()
                    guard !piece.isEmpty else { throw ArchiveError.writing("\(name): spool file ended early") }
                    done += Int64(piece.count)
                    hasher.update(data: piece)
                    try piece.withUnsafeBytes { try archive.writeData($0) }
                } else if complete {
                    try archive.finishEntry()
                    hand(archive.takeOutput())
                    let digest = hasher.finalize()
                    update { $0.digest = digest }
                    return
                }
                hand(archive.takeOutput())
            }
        } catch {
            update { $0.failure = error }
        }
    }

    /// Gives a piece of output to the consumer, first waiting while `backlog` pieces are out.
    private func hand(_ piece: [UInt8]) {
        guard !piece.isEmpty else { return }
        signal.lock()
        while !shared.abandoned && shared.outstanding >= Self.backlog { signal.wait() }
        let abandoned = shared.abandoned
        if !abandoned { shared.outstanding += 1 }
        signal.unlock()
        if !abandoned { continuation.yield(piece) }
    }
}
