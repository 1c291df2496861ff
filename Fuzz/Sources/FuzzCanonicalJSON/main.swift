import CLibFuzzer
import Foundation
import TelemetryModel

/// libFuzzer entry for the canonicalizer (`CanonicalJSON.canonicalize`), with Foundation's JSON
/// decoder as the oracle. For every text the canonicalizer accepts:
/// - Foundation reads the input and the output, and they hold the same structure and values;
/// - the output is canonical: written again it is unchanged, and an independent check of the
///   rule finds no whitespace outside strings, no raw control character and no escape the
///   rule does not write.
/// A refusal is an answer (duplicates, lone surrogates, overflowing numbers, limits); a crash,
/// a sanitizer report or a broken property is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let tight = DecodeLimits(maxLineBytes: 512, maxRecordsPerRequest: 8, maxDepth: 3, maxFields: 8, maxStringBytes: 64)
    for limits in [DecodeLimits.default, tight] {
        guard case .success(let output) = CanonicalJSON.canonicalize(input, limits: limits) else { continue }
        guard let before = try? JSONSerialization.jsonObject(with: Data(input), options: [.fragmentsAllowed]) as? NSObject else {
            fatalError("canonicalized a text Foundation refuses: \(input)")
        }
        guard let after = try? JSONSerialization.jsonObject(with: Data(output), options: [.fragmentsAllowed]) as? NSObject else {
            fatalError("the canonical form does not parse: \(output)")
        }
        guard before.isEqual(after) else { fatalError("the canonical form changed the value: \(input) -> \(output)") }
        guard case .success(let again) = CanonicalJSON.canonicalize(output, limits: limits), again == output else {
            fatalError("canonicalizing twice is not the identity: \(output)")
        }
        if let problem = RuleCheck.problem(in: output) { fatalError("\(problem): \(output)") }
    }
    return 0
}

/// The canonical rule checked byte by byte, independently of the canonicalizer.
enum RuleCheck {
    static func problem(in b: [UInt8]) -> String? {
        var i = 0
        var inString = false
        while i < b.count {
            let c = b[i]
            if !inString {
                if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { return "whitespace outside a string" }
                if c == 0x22 { inString = true }
                i += 1
                continue
            }
            if c == 0x22 {
                inString = false
            } else if c < 0x20 {
                return "a raw control character"
            } else if c == 0x5C {
                guard i + 1 < b.count else { return "a cut escape" }
                switch b[i + 1] {
                case 0x22, 0x5C, UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    i += 1
                case UInt8(ascii: "u"):
                    guard i + 5 < b.count, b[i + 2] == 0x30, b[i + 3] == 0x30, b[i + 4] == 0x30 || b[i + 4] == 0x31 else {
                        return "a \\u escape of a character that is not a control"
                    }
                    let low = b[i + 5]
                    guard (0x30...0x39).contains(low) || (0x61...0x66).contains(low) else { return "upper-case or invalid hex" }
                    let value = (b[i + 4] - 0x30) * 16 + (low <= 0x39 ? low - 0x30 : low - 0x61 + 10)
                    if [0x08, 0x09, 0x0A, 0x0C, 0x0D].contains(value) { return "\\u escape of a character with a short form" }
                    i += 5
                default:
                    return "an escape the rule does not write"
                }
            }
            i += 1
        }
        return nil
    }
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
