import CLibFuzzer
import Foundation
import TelemetryModel

/// libFuzzer entry for the ingest body decoders: `POST /v1/telemetry` (NDJSON or a JSON
/// array of events) and the JSON form of `POST /v1/logs`. Both run with the default limits
/// and with tight ones, so the refusal paths (line length, depth, fields, string length,
/// records per request) are explored as much as the happy path. A request-level refusal is
/// an answer, not a failure; only a crash or a sanitizer report is. Every accepted record's
/// time is also printed with `Timestamp.format`, as the journal mirror and bundles do.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let receivedAt: Int64 = 1_795_000_000_000
    let tight = DecodeLimits(
        maxLineBytes: 512, maxRecordsPerRequest: 8, maxDepth: 3, maxFields: 8, maxStringBytes: 64)
    for limits in [DecodeLimits.default, tight] {
        let events = try? TelemetryEventDecoder(limits: limits).decode(body: body, receivedAt: receivedAt)
        let logs = try? LogRecordDecoder(limits: limits).decodeJSON(
            body: body, defaults: LogDefaults(appId: "com.example.fuzz", deviceId: "device-1"),
            receivedAt: receivedAt)
        // A decoded time is later printed (journal mirror, bundles): any accepted value must print.
        for record in (events?.records ?? []) + (logs?.records ?? []) {
            _ = Timestamp.format(milliseconds: record.keys.time)
        }
    }
    return 0
}

// The entry point (SwiftPM renames it, so libFuzzer's own `main` never links): hand the
// command line to libFuzzer's driver, which parses its flags and runs `fuzz`.
var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(
    LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        guard let data else { return 0 }
        return fuzz(data, size)
    })
