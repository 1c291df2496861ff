import TestSupport
import Testing

@testable import TelemetryModel

/// The record scanner's cursor: the one JSON tokenizer that reads records, probes a body's
/// dialect and reads diagnostic uploads. Strict grammar, the structural limits, and the
/// layout whitespace it finds for compacting a record to one line.
@Suite struct JSONTokenizerTests {
    static func walk(_ text: String, limits: DecodeLimits = .default) -> Result<[String], ShapeError> {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBufferPointer { b in
            var cursor = JSONRecordScanner.Cursor(b: b, limits: limits)
            var seen: [String] = []
            do {
                try cursor.object { key, cursor in
                    seen.append(key)
                    if cursor.peek == UInt8(ascii: "[") {
                        try cursor.array { element in
                            if case .string(let s) = try element.value(capture: true) { seen.append("[\(s)]") } else { seen.append("[?]") }
                        }
                    } else {
                        _ = try cursor.value(capture: false)
                    }
                }
                cursor.skipSpace()
                guard cursor.atEnd else { throw ShapeError.syntax("trailing") }
                return .success(seen)
            } catch let error as ShapeError {
                return .failure(error)
            } catch {
                return .failure(.syntax("\(error)"))
            }
        }
    }

    static func failure(_ text: String, limits: DecodeLimits = .default) -> String? {
        if case .failure(let e) = walk(text, limits: limits) { return e.message }
        return nil
    }

    @Test func walksObjectsAndArraysHandingOutKeysAndElements() throws {
        #expect(try Self.walk(#"{"a":1,"tags":["x","y\n"],"b":{"c":[true,null,-1.5e3]}}"#).get() == ["a", "tags", "[x]", "[y\n]", "b"])
        #expect(try Self.walk(#" { "empty" : [ ] , "o" : { } } "#).get() == ["empty", "o"])
    }

    @Test func refusesWhatRFC8259Refuses() {
        for (text, why) in [
            (#"{"a":1,}"#, "expected a member name"),
            (#"{"a":[1,]}"#, "invalid value"),
            (#"{"a":[1 2]}"#, "expected ',' or ']'"),
            (#"{"a":{"b":1 "c":2}}"#, "expected ',' or '}'"),
            (#"{"a":[1,2"#, "unterminated array"),
            (#"{"a":01}"#, "expected ',' or '}'"),
            (#"{"a":"\x"}"#, "invalid escape"),
            (#"{"a":tru}"#, "invalid literal"),
            ("{\"a\":\"\u{1}\"}", "control character inside a string"),
        ] {
            let message = Self.failure(text)
            #expect(message?.contains(why) == true, "\(text): \(message ?? "accepted")")
        }
    }

    @Test func enforcesDepthFieldAndStringLimitsNamingThem() {
        let limits = DecodeLimits(maxDepth: 3, maxFields: 4, maxStringBytes: 5)
        #expect(Self.failure(#"{"a":{"b":[[1]]}}"#, limits: limits) == "JSON nesting deeper than the limit maxDepth=3")
        #expect(Self.failure(#"{"a":{"b":[1]}}"#, limits: limits) == nil)
        #expect(Self.failure(#"{"a":1,"b":2,"c":{"d":3,"e":4}}"#, limits: limits) == "more fields than the limit maxFields=4")
        #expect(Self.failure(#"{"a":"123456"}"#, limits: limits) == "a string is longer than the limit maxStringBytes=5")
        // A cursor walking under other limits (an upload's records) is held to those instead.
        let bytes = Array(#"["123456",[[[1]]]]"#.utf8)
        bytes.withUnsafeBufferPointer { b in
            let strict = JSONRecordScanner.Cursor(b: b, limits: limits)
            var loose = strict.walking(under: .walkOnly)
            #expect(throws: Never.self) { try loose.array { _ = try $0.value(capture: false) } }
            #expect(loose.atEnd)
        }
    }

    @Test func findsTheLayoutWhitespaceOutsideStringsAndCompactsByIt() throws {
        let text = "{ \"message\" : \"keep  these  spaces\",\n  \"n\": [1, 2] }"
        let bytes = Array(text.utf8)
        let scanner = JSONRecordScanner(limits: .default, wantedTop: ["message"], wantedData: [])
        let compacted = try bytes.withUnsafeBufferPointer { b in
            let record = try scanner.scan(b).get()
            #expect(record.top["message"] == .string("keep  these  spaces"))
            #expect(!record.edits.isEmpty)
            return record.canonical(b)
        }
        #expect(String(decoding: compacted, as: UTF8.self) == #"{"message":"keep  these  spaces","n":[1,2]}"#)
        let tight = Array(#"{"a":"b c"}"#.utf8)
        #expect(try tight.withUnsafeBufferPointer { try scanner.scan($0).get().edits }.isEmpty)
    }

    /// The scanner checks non-ASCII strings itself: it must accept and refuse exactly what
    /// the standard library's UTF-8 validation does, on edge cases and on random bytes.
    @Test func utf8CheckAgreesWithTheStandardLibrary() {
        var random = SeededRandom(seed: 9)
        var cases: [[UInt8]] = [
            [0xC2, 0x80], [0xC1, 0xBF], [0xE0, 0xA0, 0x80], [0xE0, 0x9F, 0xBF], [0xED, 0x9F, 0xBF], [0xED, 0xA0, 0x80],
            [0xF0, 0x90, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF], [0xF4, 0x90, 0x80, 0x80],
            [0xF5, 0x80, 0x80, 0x80],
            [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0x80], [0xFF], Array("naïve café 日本 😀".utf8),
        ]
        for _ in 0..<20_000 {
            let n = Int(random.next() % 6) + 1
            cases.append(
                (0..<n).map { _ in UInt8(truncatingIfNeeded: random.next() % 3 == 0 ? random.next() % 0x80 : 0x80 + random.next() % 0x80) })
        }
        for bytes in cases {
            let ours = bytes.withUnsafeBufferPointer { JSONStringToken.isValidUTF8($0) }
            #expect(ours == (String(validating: bytes, as: UTF8.self) != nil), "\(bytes)")
        }
    }
}
