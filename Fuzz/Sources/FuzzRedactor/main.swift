import CLibFuzzer
import Crypto
import Foundation
import Privacy
import TelemetryModel

/// libFuzzer entry for the structural redactor (`RecordRedactor`), with Foundation's JSON
/// parser as the oracle. For every input the ingest tokenizer accepts (what a stored record
/// can be), as a caller with and without `pii`, verbose or not: the redactor must not crash,
/// its output must parse, and it must have the input's structure — the same objects and
/// arrays, the same numbers, booleans and nulls — where strings (and member names) may differ
/// only by a redaction mark, and a number only by becoming a pseudonym.
let pseudonymizer = Pseudonymizer(key: SymmetricKey(data: [UInt8](repeating: 0x5A, count: 32)))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard Accepted.byTokenizer(input),
        let expected = try? JSONSerialization.jsonObject(with: Data(input), options: [.fragmentsAllowed])
    else { return 0 }
    for pii in [false, true] {
        for verbose in [false, true] {
            var redactor = RecordVisibility(piiAllowed: pii, pseudonymizer: pseudonymizer).redactor()
            let output = redactor.redact(json: input, verbose: verbose).json
            guard let shown = try? JSONSerialization.jsonObject(with: Data(output), options: [.fragmentsAllowed]) else {
                fatalError("output does not parse (pii \(pii), verbose \(verbose)): \(String(decoding: output, as: UTF8.self))")
            }
            guard Shape.same(expected, shown) else {
                fatalError(
                    "structure changed (pii \(pii), verbose \(verbose)):\n in  \(String(decoding: input, as: UTF8.self))\n out \(String(decoding: output, as: UTF8.self))"
                )
            }
        }
    }
    return 0
}

/// Whether the ingest tokenizer accepts `input` as one JSON value whose objects have no
/// duplicate member names (Foundation keeps only one of them, so it could not be the oracle).
enum Accepted {
    struct Names: JSONTokenVisitor {
        var stack: [Set<String>] = []
        var duplicate = false
        mutating func beginObject() { stack.append([]) }
        mutating func endObject() { stack.removeLast() }
        mutating func beginArray() {}
        mutating func endArray() {}
        mutating func name(_ decoded: String) {
            if !stack[stack.count - 1].insert(decoded).inserted { duplicate = true }
        }
        mutating func string(_ raw: UnsafeBufferPointer<UInt8>) {}
        mutating func number(_ raw: UnsafeBufferPointer<UInt8>) {}
        mutating func literal(_ raw: UnsafeBufferPointer<UInt8>) {}
    }

    static func byTokenizer(_ input: [UInt8]) -> Bool {
        var names = Names()
        let ok = input.withUnsafeBufferPointer { b in (try? JSONTokenWalk.walk(b, maxDepth: 64, visitor: &names)) != nil }
        return ok && !names.duplicate
    }
}

/// The oracle's comparison.
enum Shape {
    static func same(_ a: Any, _ b: Any) -> Bool {
        switch (a, b) {
        case (let x as [String: Any], let y as [String: Any]):
            guard x.count == y.count else { return false }
            var leftIn: [Any] = []
            var leftOut = y
            for (key, value) in x {
                // A key kept with its value; otherwise the member was renamed, or a redacted
                // name now holds the key an input member had (a literal `user-…` name).
                if let other = leftOut[key], same(value, other) {
                    leftOut.removeValue(forKey: key)
                } else {
                    leftIn.append(value)
                }
            }
            // A renamed member carries a mark; its value must match one of the renamed inputs.
            guard leftOut.keys.allSatisfy(isRedacted) else { return false }
            return matches(leftIn[...], Array(leftOut.values))
        case (let x as [Any], let y as [Any]):
            return x.count == y.count && zip(x, y).allSatisfy(same)
        case (let x as String, let y as String):
            return x == y || isRedacted(y)
        case (is String, _):
            return false
        case (is NSNull, is NSNull):
            return true
        case (let x as NSNumber, let y):
            if let y = y as? NSNumber { return x == y }
            if let y = y as? String { return isPseudonym(y) }
            return false
        default:
            return false
        }
    }

    /// Whether each of `inputs` can be paired with its own one of `outputs` (a search with
    /// backtracking: a first fit is not always the pairing that works).
    static func matches(_ inputs: ArraySlice<Any>, _ outputs: [Any]) -> Bool {
        guard let first = inputs.first else { return outputs.isEmpty }
        for (i, candidate) in outputs.enumerated() where same(first, candidate) {
            var rest = outputs
            rest.remove(at: i)
            if matches(inputs.dropFirst(), rest) { return true }
        }
        return false
    }

    /// Text holding a pseudonym, a mask or a withheld marker. Matched scalar by scalar: text
    /// after a mark may start with a combining character, which would join the mark's last
    /// digit into one grapheme.
    static func isRedacted(_ s: String) -> Bool {
        s.contains(/(user|token|oid)-[0-9a-f]{24}/.matchingSemantics(.unicodeScalar))
            || s.contains(/\[withheld: [0-9]+ chars, text-[0-9a-f]{24}\]/.matchingSemantics(.unicodeScalar))
    }

    static func isPseudonym(_ s: String) -> Bool { s.wholeMatch(of: /(user|token)-[0-9a-f]{24}/) != nil }
}

var argc = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(
    LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        guard let data else { return 0 }
        return fuzz(data, size)
    })
