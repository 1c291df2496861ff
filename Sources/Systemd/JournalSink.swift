/// Where journal entries go. The daemon uses ``NativeJournalSink`` (journald's native
/// protocol); tests inject a recording or deliberately slow sink, so the mirror and the log
/// handler can be exercised without a journald.
public protocol JournalSink: Sendable {
    /// Sends one entry synchronously; may block while journald is slow, which is why the
    /// mirror calls it from its own thread and never from the ingest path.
    ///
    /// - Returns: 0 on success, or a negative errno (`-ENOENT` when there is no journal
    ///   socket, `-ECONNREFUSED` when nothing listens on it), as libsystemd reports it.
    func send(_ entry: JournalEntry) -> Int32
}
