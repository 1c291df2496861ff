import GRDBSQLite

/// Memory SQLite holds for every connection of the process (page caches, prepared
/// statements, sort buffers), as its own allocator counts it. Published beside the heap in
/// use so that an operator sizing `MemoryMax=` can tell the database's share from the
/// daemon's own buffers.
public enum SQLiteMemory {
    /// Bytes SQLite has allocated and not freed, over all connections.
    public static func usedBytes() -> Int64 {
        sqlite3_memory_used()
    }
}
