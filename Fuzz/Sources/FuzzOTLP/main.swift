import CLibFuzzer
import Foundation
import OTLP
import TelemetryModel

/// libFuzzer entry for OTLP/HTTP logs: every input is decoded as a protobuf and as a JSON
/// export request, with the default limits and with tight ones (so the per-record native
/// limits and the request's record limit are hit along the way), the dialect probe that
/// tells OTLP JSON from our NDJSON runs on it, and whatever was refused is encoded as the
/// answer an exporter would get. Any crash, hang or sanitizer report is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let tight = DecodeLimits(maxLineBytes: 512, maxRecordsPerRequest: 8, maxDepth: 3, maxFields: 12, maxStringBytes: 64)
    for limits in [DecodeLimits.default, tight] {
        let decoder = OTLPLogsDecoder(limits: limits)
        for encoding in [OTLPEncoding.protobuf, .json] {
            guard let batch = try? decoder.decode(body, encoding: encoding, receivedAt: 1_795_000_000_000) else { continue }
            // Every record is accounted for exactly once: stored-to-be or refused.
            precondition(batch.logs.count + batch.events.count + batch.rejected.count == batch.recordCount)
            _ = OTLPAnswer.success(rejected: batch.rejected, warning: nil, encoding: encoding)
        }
    }
    _ = OTLPEncoding.detect(contentType: "application/json", body: body)
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
