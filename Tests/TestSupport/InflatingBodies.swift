/// Telemetry bodies that are small once gzipped and megabytes once inflated: what the
/// in-flight budget suites (in process and against a daemon) send.
public enum InflatingBodies {
    /// NDJSON events of about 60 KB each (two 30,000-byte strings), `bytes` in all: a few
    /// kilobytes once gzipped. Returns the events' ids and the body.
    public static func ndjson(_ tag: String, bytes: Int) -> (ids: [String], ndjson: [UInt8]) {
        let pad = String(repeating: "x", count: 30_000)
        let count = max(1, bytes / 60_200)
        let ids = (0..<count).map { "\(tag)-\($0)" }
        let lines = ids.map {
            #"{"name":"AppLaunch","appId":"com.contoso.inflate","deviceId":"d","eventId":"\#($0)","data":{"p0":"\#(pad)","p1":"\#(pad)"}}"#
        }
        return (ids, Array(lines.joined(separator: "\n").utf8))
    }
}
