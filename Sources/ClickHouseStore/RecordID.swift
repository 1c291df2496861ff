/// The id a record carries in ClickHouse: unique across the cluster, ordered by receive
/// time, and deterministic, so a spool batch the forwarder re-sends after a crash or a lost
/// acknowledgement produces exactly the rows it produced the first time, which
/// `ReplacingMergeTree` then folds into one (reads use `FINAL`).
///
///     bit 63      0
///     bits 62..31 receive second, counted from 2020-01-01 (32 bits: until 2156)
///     bits 30..23 collector id (0-255, `collector.id`)
///     bits 22..0  the record's spool sequence number, low 23 bits
///
/// Why seconds and 23 bits rather than milliseconds and 14: every record of one request
/// shares the request's receive millisecond, and one request may hold more than 16,384
/// records (`limits.maxRecordsPerRequest`), so a millisecond layout would give two records of
/// one large request the same id. With this layout two records of one collector and
/// environment share an id only if that collector stores more than 8,388,608 records within
/// one second (two orders of magnitude past what one collector ingests). Sequence numbers
/// never repeat within a spool (they only grow), and the spool's environments are separate
/// ClickHouse databases, so (id, collector) is a row's identity.
///
/// Readers page on `id` (a total order, the same on every collector), and compare
/// `receivedAt` for time; ids of two collectors interleave by receive second.
public struct RecordID: Sendable, Hashable, Comparable {
    public let rawValue: Int64

    /// 2020-01-01T00:00:00Z in Unix milliseconds: the layout's zero.
    public static let epochMilliseconds: Int64 = 1_577_836_800_000
    static let sequenceBits = 23
    static let collectorBits = 8

    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// The id of the record numbered `sequence` in a spool batch received at `receivedAtMs`.
    public init(receivedAtMs: Int64, collector: CollectorID, sequence: Int64) {
        let seconds = max(0, receivedAtMs - Self.epochMilliseconds) / 1000
        let sequenceMask: Int64 = (1 << Self.sequenceBits) - 1
        rawValue =
            (seconds & 0xFFFF_FFFF) << (Self.sequenceBits + Self.collectorBits)
            | Int64(collector.rawValue) << Self.sequenceBits
            | (sequence & sequenceMask)
    }

    /// The receive second the id encodes, as Unix milliseconds (the start of that second).
    public var receivedSecondMs: Int64 { (rawValue >> (Self.sequenceBits + Self.collectorBits)) * 1000 + Self.epochMilliseconds }

    public var collector: CollectorID { CollectorID(UInt8(truncatingIfNeeded: rawValue >> Self.sequenceBits)) }

    /// The lowest id of any record received at or after `ms`: where a time-bounded page starts.
    public static func lowerBound(receivedAtMs ms: Int64) -> RecordID {
        let seconds = max(0, ms - epochMilliseconds + 999) / 1000
        return RecordID(rawValue: seconds << (sequenceBits + collectorBits))
    }

    public static func < (a: RecordID, b: RecordID) -> Bool { a.rawValue < b.rawValue }
}

/// Which collector wrote a record: configured per collector (`collector.id`), 0-255, and
/// stored in the `collector` column beside the id. Configured rather than derived, because
/// two collectors that picked the same number would silently fold each other's records
/// together; an operator numbering them is the one way that cannot happen.
public struct CollectorID: Sendable, Hashable {
    public let rawValue: UInt8
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }
}
