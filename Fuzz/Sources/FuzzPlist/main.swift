import CLibFuzzer
import Foundation
import InfoPlist

/// libFuzzer entry for the plist importer behind `mamtelemetryctl apps import`:
/// `InfoPlistSettings(data:)` on XML, binary and garbage property lists. Refusing a bad file
/// is an answer; only a crash or a sanitizer report is a failure.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = try? InfoPlistSettings(data: Data(bytes: data, count: size))
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
