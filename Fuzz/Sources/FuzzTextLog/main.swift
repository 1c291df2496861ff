import CLibFuzzer
import Foundation
import TelemetryModel

/// libFuzzer entry for console-export text logs: the single-line parser `TextLogLine.parse`
/// on the whole input, and `LogRecordDecoder.decodeText` on it as a multi-line body (with
/// tight limits too, so over-long lines and too many lines are refused along the way), plus
/// `TimeExpression.parse` (the `since`/`until` query grammar) and printing what it answers.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: body, as: UTF8.self)
    _ = TextLogLine.parse(text)
    // The same time grammar, as the `since`/`until` query parameters read it.
    if let ms = TimeExpression.parse(text, now: 1_795_000_000_000) { _ = Timestamp.format(milliseconds: ms) }
    let defaults = LogDefaults(appId: "com.example.fuzz", sessionId: "session-1")
    let tight = DecodeLimits(
        maxLineBytes: 256, maxRecordsPerRequest: 16, maxDepth: 3, maxFields: 8, maxStringBytes: 64)
    for limits in [DecodeLimits.default, tight] {
        _ = try? LogRecordDecoder(limits: limits).decodeText(
            body: body, defaults: defaults, receivedAt: 1_795_000_000_000)
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
