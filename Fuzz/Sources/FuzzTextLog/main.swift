import CLibFuzzer
import Foundation
import TelemetryModel
import TextExportReference

/// libFuzzer entry for console-export text: the input as a multi-line export. `TextExport`
/// (entries, continuation lines joined, long entries cut, long lines refused) must read
/// exactly what the independent `TextExportReference` reads, under a roomy and two tight
/// entry limits; every part fits its limit; `LogRecordDecoder.decodeText` stores each entry
/// as JSON whose message is the entry's, byte for byte (and refuses too many lines under
/// tight limits without a crash). Also `TimeExpression.parse` (the `since`/`until` grammar).
/// A disagreement traps, so libFuzzer keeps the input as a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: body, as: UTF8.self)
    if let ms = TimeExpression.parse(text, now: 1_795_000_000_000) { _ = Timestamp.format(milliseconds: ms) }
    for limit in [65_536, 96, 24] {
        let (entries, rejected) = TextExport.entries(body, maxEntryBytes: limit)
        let product = entries.map {
            TextExportReference.Entry(line: $0.line, time: $0.time, level: $0.level, component: $0.component, message: $0.message)
        }
        let reference = TextExportReference.entries(body, maxEntryBytes: limit)
        guard product == reference.entries, rejected.map(\.line) == reference.rejectedLines else {
            fatalError("limit \(limit): the product reads \(product), rejecting \(rejected.map(\.line)); the reference reads \(reference)")
        }
        for entry in entries where entry.message.utf8.count > limit {
            fatalError("limit \(limit): a part of \(entry.message.utf8.count) bytes")
        }
        let limits = DecodeLimits(maxLineBytes: limit, maxRecordsPerRequest: .max)
        guard
            let (records, _) = try? LogRecordDecoder(limits: limits).decodeText(
                body: body, defaults: LogDefaults(appId: "com.example.fuzz", sessionId: "session-1"), receivedAt: 1_795_000_000_000)
        else { fatalError("limit \(limit): a text body was refused whole") }
        for (record, entry) in zip(records, entries) {
            let object = try? JSONSerialization.jsonObject(with: Data(record.json)) as? [String: Any]
            guard let message = object?["message"] as? String, message.utf8.elementsEqual(entry.message.utf8) else {
                fatalError("limit \(limit): record \(String(decoding: record.json, as: UTF8.self)) does not carry \(entry)")
            }
        }
    }
    let tight = DecodeLimits(maxLineBytes: 256, maxRecordsPerRequest: 16, maxDepth: 3, maxFields: 8, maxStringBytes: 64)
    _ = try? LogRecordDecoder(limits: tight).decodeText(
        body: body, defaults: LogDefaults(appId: "com.example.fuzz"), receivedAt: 1_795_000_000_000)
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
