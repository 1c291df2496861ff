import CLibFuzzer
import Compression
import Foundation

/// libFuzzer entry for request-body decompression: `ContentDecoding.decode` with every
/// encoding a client may name (deflate goes through zlib-vs-raw detection). Small limits keep
/// bombs cheap for the fuzzer; the one contract checked besides "no crash" is that no output
/// ever exceeds `maxOutputBytes` — a bigger answer would be a limit the daemon does not enforce.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = Array(UnsafeBufferPointer(start: data, count: size))
    let limits = Inflate.Limits(maxOutputBytes: 1 << 20, maxRatio: 200, ratioGraceBytes: 64 << 10)
    for encoding in [nil, "identity", "gzip", "x-gzip", " GZIP ", "deflate", "Deflate", "br"] as [String?] {
        guard let out = try? ContentDecoding.decode(body, contentEncoding: encoding, limits: limits) else { continue }
        let isIdentity = encoding == nil || encoding == "identity"
        if !isIdentity && out.count > limits.maxOutputBytes {
            fatalError("\(encoding!): \(out.count) output bytes, over maxOutputBytes=\(limits.maxOutputBytes)")
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
