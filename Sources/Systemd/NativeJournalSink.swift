import CSystemd
import Glibc

/// Sends entries to journald with `sd_journal_sendv`, one iovec per `NAME=value` field.
///
/// `sd_journal_send` is variadic and cannot be called from Swift; `sd_journal_sendv` takes
/// the fields as an array and switches to the binary-safe form for values containing
/// newlines (and to a memfd for entries larger than a datagram), so any value arrives
/// intact. libsystemd keeps one datagram socket per process, shared by every sink.
public struct NativeJournalSink: JournalSink {
    /// A sink for the system journal at ``JournalSocket/path``.
    public init() {}

    public func send(_ entry: JournalEntry) -> Int32 {
        guard entry.count > 0 else { return -EINVAL }
        return entry.withItems { buffer, items in
            withUnsafeTemporaryAllocation(of: iovec.self, capacity: items.count) { vectors in
                guard let base = buffer.baseAddress else { return -EINVAL }
                for (index, item) in items.enumerated() {
                    vectors[index] = iovec(
                        iov_base: UnsafeMutableRawPointer(mutating: base + item.start),
                        iov_len: item.end - item.start)
                }
                return sd_journal_sendv(vectors.baseAddress, Int32(items.count))
            }
        }
    }
}
