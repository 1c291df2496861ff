/// The fields one generated telemetry event is written with, whichever data set chose them.
/// Devices, sessions and users are ordinals; their GUID-shaped ids come from `BenchData.guid`,
/// so an ordinal always maps to the same id.
struct BenchEvent {
    var name: String
    var time: String
    var app: String
    var version: String
    var sdkPatch: Int
    var device: Int
    var session: Int
    var user: Int
    var settings: String
    var data: String

    /// One NDJSON line; `nonce` and `id` make the `eventId` unique per run and record.
    func write(into out: inout [UInt8], nonce: UInt64, id: UInt64) {
        let line =
            "{\"name\":\"\(name)\",\"time\":\"\(time)\",\"appId\":\"\(app)\",\"appVersion\":\"\(version)\",\"sdkVersion\":\"19.6.\(sdkPatch)\",\"platform\":\"\(device % 3 == 0 ? "Android" : "iOS")\",\"deviceId\":\"\(BenchData.guid(1, device))\",\"sessionId\":\"\(BenchData.guid(2, session))\",\"identity\":\"user\(user)@contoso.com\",\"accountId\":\"\(BenchData.guid(3, user))\",\"tenantId\":\"\(BenchData.guid(4, user % 5))\",\"eventId\":\"\(String(nonce, radix: 16))-\(String(id, radix: 16))\",\"settings\":{\(settings)},\"data\":\(data)}\n"
        out.append(contentsOf: line.utf8)
    }
}
