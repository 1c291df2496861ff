/// Tells a body's dialect from its first object's member names, with the same strict
/// tokenizer that reads records: `POST /v1/logs` takes both our NDJSON records and OTLP's
/// JSON export request under `application/json`, and only the latter has `resourceLogs`.
public enum JSONMemberProbe {
    /// Whether `body` (after leading whitespace) is a JSON object with a top-level member
    /// named `name`. Stops at that member, so a large body is not walked to its end; any
    /// syntax error before it answers `false` and the body keeps its native reading.
    public static func topLevelObject(_ body: [UInt8], hasMember name: String) -> Bool {
        member(name, of: body) { _ in true } != nil
    }

    /// The string value of `record`'s top-level member `name` (unescaped), nil when the record
    /// has none, it is not a string, or the record does not parse. The spool reads a stored
    /// record's `eventId` with it.
    public static func topLevelString(_ record: [UInt8], member name: String) -> String? {
        member(name, of: record) { cursor -> String? in
            if case .string(let value) = try cursor.value(capture: true) { return value }
            return nil
        } ?? nil
    }

    /// What `read` makes of the value of the top-level member `name` of the object `bytes`
    /// holds (after leading whitespace), the cursor on that value; nil when there is no such
    /// member or the text before it (or the value) does not parse. Only the members before
    /// `name` are walked, under no size limits: the record limits do not apply to a request.
    private static func member<T>(_ name: String, of bytes: [UInt8], _ read: (inout JSONRecordScanner.Cursor) throws -> T) -> T? {
        var result: T?
        return bytes.withUnsafeBufferPointer { bytes in
            var cursor = JSONRecordScanner.Cursor(b: bytes, limits: .walkOnly)
            cursor.skipSpace()
            guard cursor.peek == UInt8(ascii: "{") else { return nil }
            do {
                try cursor.object { key, cursor in
                    guard key == name else {
                        _ = try cursor.value(capture: false)
                        return
                    }
                    result = try read(&cursor)
                    throw FoundMember()
                }
            } catch is FoundMember {
                return result
            } catch {
                return nil
            }
            return nil
        }
    }
}

/// Ends a member walk at the member sought.
private struct FoundMember: Error {}
