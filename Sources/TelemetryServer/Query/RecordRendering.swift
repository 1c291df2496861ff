import StoreCore
import TelemetryModel

/// How a stored record is shown outside a page (follow streams): the client's JSON with the
/// server's fields put in front, exactly as `PageStream` and bundles write it.
enum RecordRendering {
    static func render(_ r: StoredRecord) -> [UInt8] {
        var w = RecordLineWriter(capacity: r.json.count + 128)
        w.append(r)
        return w.take()
    }
}
