public import TelemetryModel

/// One matching record as a scan hands it to its visitor: the server-assigned id and receive
/// time, its keys, and its JSON as the query's presenter shows it. The bytes are borrowed
/// from the batch being read (no copy per record, which is what makes a large page cheap)
/// and are valid only during the visitor's call.
public struct ScannedRecord {
    public let id: Int64
    public let receivedAt: Int64
    public let env: TelemetryEnvironment
    public let keys: RecordKeys
    public let json: UnsafeBufferPointer<UInt8>

    /// `json` must stay valid for as long as the visitor may read it (the visit's call).
    public init(id: Int64, receivedAt: Int64, env: TelemetryEnvironment, keys: RecordKeys, json: UnsafeBufferPointer<UInt8>) {
        self.id = id
        self.receivedAt = receivedAt
        self.env = env
        self.keys = keys
        self.json = json
    }

    /// An owned copy, for callers that keep records beyond the visit.
    public var stored: StoredRecord {
        StoredRecord(id: id, receivedAt: receivedAt, env: env, keys: keys, json: Array(json))
    }
}

/// What a scan tells its visitor, in order: optionally the page's cursor first (a response
/// that carries it in a header must know it before the first record is sent), then each
/// record of the page.
public enum ScanEvent {
    /// Where the next page starts (nil: this is the last page), found from the keys alone.
    case pageEnd(Int64?)
    case record(ScannedRecord)
}
