/// Keys blocks decoded by an NDJSON page's first pass (the one that finds its cursor for the
/// `Next-Cursor` header), handed to the second pass that reads the records, so each block of
/// the page is inflated and decoded once rather than twice. Bounded by records held: a page
/// with a very selective filter can span a whole window, and past the bound the second pass
/// simply decodes again.
struct PageKeysCache {
    static let maxRecords = 65_536

    private var blocks: [Int64: StoredBlock] = [:]
    private var records = 0

    /// Keeps `block` (the row starting at `firstSeq`) while the cache has room.
    mutating func keep(_ block: StoredBlock, firstSeq: Int64) {
        guard records + block.keys.count <= Self.maxRecords else { return }
        blocks[firstSeq] = block
        records += block.keys.count
    }

    /// The block kept for the row starting at `firstSeq`, once.
    mutating func take(_ firstSeq: Int64) -> StoredBlock? {
        blocks.removeValue(forKey: firstSeq)
    }
}
