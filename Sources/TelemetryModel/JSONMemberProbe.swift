/// Tells a body's dialect from its first object's member names, with the same strict
/// tokenizer that reads records: `POST /v1/logs` takes both our NDJSON records and OTLP's
/// JSON export request under `application/json`, and only the latter has `resourceLogs`.
public enum JSONMemberProbe {
    /// Whether `body` (after leading whitespace) is a JSON object with a top-level member
    /// named `name`. Stops at that member, so a large body is not walked to its end; any
    /// syntax error before it answers `false` and the body keeps its native reading.
    public static func topLevelObject(_ body: [UInt8], hasMember name: String) -> Bool {
        struct Found: Error {}
        // Only the members before `name` are walked; the record limits do not apply to a
        // whole request.
        return body.withUnsafeBufferPointer { bytes in
            var cursor = JSONRecordScanner.Cursor(b: bytes, limits: .walkOnly)
            cursor.skipSpace()
            guard cursor.peek == UInt8(ascii: "{") else { return false }
            do {
                try cursor.object { key, cursor in
                    if key == name { throw Found() }
                    _ = try cursor.value(capture: false)
                }
            } catch is Found {
                return true
            } catch {
                return false
            }
            return false
        }
    }

    /// The string value of `record`'s top-level member `name` (unescaped), nil when the record
    /// has none, it is not a string, or the record does not parse. The spool reads a stored
    /// record's `eventId` with it.
    public static func topLevelString(_ record: [UInt8], member name: String) -> String? {
        struct Found: Error { var value: String? }
        return record.withUnsafeBufferPointer { bytes in
            var cursor = JSONRecordScanner.Cursor(b: bytes, limits: .walkOnly)
            cursor.skipSpace()
            guard cursor.peek == UInt8(ascii: "{") else { return nil }
            do {
                try cursor.object { key, cursor in
                    guard key == name else {
                        _ = try cursor.value(capture: false)
                        return
                    }
                    if case .string(let value) = try cursor.value(capture: true) { throw Found(value: value) }
                    throw Found(value: nil)
                }
            } catch let found as Found {
                return found.value
            } catch {
                return nil
            }
            return nil
        }
    }
}
