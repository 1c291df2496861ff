/// A JSON value the scanner kept: scalars with their value, containers only by kind.
enum JSONScalar: Equatable {
    case string(String)
    /// The number's text, parsed on demand (most numbers are never looked at).
    case number(String)
    case bool(Bool)
    case null
    case object
    case array
}

/// The members of a record the daemon routes and indexes on, captured in one pass.
struct ScannedRecord {
    /// Wanted top-level members.
    var top: [String: JSONScalar] = [:]
    /// Wanted members of the nested `data` object (when `data` is an object).
    var data: [String: JSONScalar] = [:]
    /// Every scalar member of the nested `settings` object (flag spellings vary).
    var settings: [String: JSONScalar] = [:]
    /// What turns the record's bytes into its canonical form (``CanonicalJSON``), in input
    /// order: whitespace outside strings removed, strings with escapes the canonical form
    /// does not use written again. Empty for a record that arrived canonical.
    var edits: [JSONEdit] = []
    /// Where the `null` of each wanted top-level member that is `null` stands, so a default
    /// can take its place instead of becoming a second member of the same name.
    var nulls: [String: Range<Int>] = [:]

    /// The record's canonical bytes.
    func canonical(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        edits.isEmpty ? Array(bytes) : JSONEdit.apply(edits, to: bytes)
    }
}

/// A strict, single-pass JSON scanner for one record: it validates the whole text (RFC
/// 8259 grammar, UTF-8, escapes, and what the canonical form refuses: duplicate member names,
/// lone surrogates, numbers that are not finite doubles), enforces the structural limits
/// (depth, member count, string length), notes what the canonical form rewrites, and captures
/// just the members it is asked for — one pass instead of a limits pass plus `JSONDecoder`,
/// which dominated the ingest profile.
struct JSONRecordScanner {
    let limits: DecodeLimits
    let wantedTop: Set<String>
    let wantedData: Set<String>

    func scan(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<ScannedRecord, ShapeError> {
        var scratch = Cursor.Scratch()
        return scan(bytes, scratch: &scratch)
    }

    /// Same as `scan(_:)`, with storage shared by the records of one body.
    func scan(_ bytes: UnsafeBufferPointer<UInt8>, scratch: inout Cursor.Scratch) -> Result<ScannedRecord, ShapeError> {
        var cursor = Cursor(b: bytes, limits: limits, strictness: .record, recordingEdits: true)
        cursor.borrow(&scratch)
        defer { cursor.give(back: &scratch) }
        var record = ScannedRecord()
        // Sized for a typical record up front: growing three dictionaries member by member
        // was several allocations of every record's decode.
        record.top.reserveCapacity(16)
        record.data.reserveCapacity(8)
        // Read through locals: captured through `self`, the scanner was copied for every member.
        let wantedTop = self.wantedTop
        let wantedData = self.wantedData
        do {
            cursor.skipSpace()
            guard cursor.peek == UInt8(ascii: "{") else { return .failure(.notAnObject) }
            try cursor.object { key, cursor in
                let wanted = wantedTop.contains(key)
                if key == "data" || key == "settings", cursor.peek == UInt8(ascii: "{") {
                    record.top[key] = .object
                    let isData = key == "data"
                    try cursor.object { inner, cursor in
                        if isData ? wantedData.contains(inner) : true {
                            let v = try cursor.value(capture: true)
                            if isData { record.data[inner] = v } else { record.settings[inner] = v }
                        } else {
                            _ = try cursor.value(capture: false)
                        }
                    }
                } else {
                    let v = try cursor.value(capture: wanted)
                    if wanted {
                        record.top[key] = v
                        if case .null = v { record.nulls[key] = cursor.i - 4..<cursor.i }
                    }
                }
            }
            cursor.skipSpace()
            guard cursor.atEnd else { throw ShapeError.syntax("trailing characters after the object") }
        } catch let e as ShapeError {
            return .failure(e)
        } catch {
            return .failure(.syntax("unreadable"))
        }
        record.edits = cursor.edits ?? []
        return .success(record)
    }
}
