import TelemetryModel
import Testing

/// The public walk over the ingest tokenizer: what a reader outside the module (the redactor)
/// sees of a JSON text.
@Suite struct JSONTokenWalkTests {
    struct Recorder: JSONTokenVisitor {
        var tokens: [String] = []
        mutating func beginObject() { tokens.append("{") }
        mutating func endObject() { tokens.append("}") }
        mutating func beginArray() { tokens.append("[") }
        mutating func endArray() { tokens.append("]") }
        mutating func name(_ decoded: String) { tokens.append("name:\(decoded)") }
        mutating func string(_ raw: UnsafeBufferPointer<UInt8>) { tokens.append("string:\(String(decoding: raw, as: UTF8.self))") }
        mutating func number(_ raw: UnsafeBufferPointer<UInt8>) { tokens.append("number:\(String(decoding: raw, as: UTF8.self))") }
        mutating func literal(_ raw: UnsafeBufferPointer<UInt8>) { tokens.append("literal:\(String(decoding: raw, as: UTF8.self))") }
    }

    static func walk(_ text: String, maxDepth: Int = 512) -> Result<[String], JSONWalkError> {
        Array(text.utf8).withUnsafeBufferPointer { b in
            var recorder = Recorder()
            do throws(JSONWalkError) {
                try JSONTokenWalk.walk(b, maxDepth: maxDepth, visitor: &recorder)
                return .success(recorder.tokens)
            } catch {
                return .failure(error)
            }
        }
    }

    @Test func namesArriveDecodedAndValuesRaw() throws {
        let tokens = try Self.walk(#" {"us\u0065r" : "dave\u0040contoso.com", "n":[-1.5e3, true, null, {}], "o":{"a":[]}} "#).get()
        #expect(
            tokens == [
                "{", "name:user", "string:dave\\u0040contoso.com", "name:n", "[", "number:-1.5e3", "literal:true", "literal:null",
                "{", "}", "]", "name:o", "{", "name:a", "[", "]", "}", "}",
            ])
    }

    @Test(arguments: [#"{"a":1"#, #"{"a":1} x"#, #"{"a":"\x"}"#, #"["\u12"]"#, "", #"{"a":tru}"#])
    func brokenTextIsRefused(text: String) {
        #expect(throws: JSONWalkError.self) { try Self.walk(text).get() }
    }

    @Test func nestingPastTheLimitIsRefused() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        #expect((try? Self.walk(deep, maxDepth: 40).get()) != nil)
        #expect(throws: JSONWalkError.self) { try Self.walk(deep, maxDepth: 39).get() }
    }
}
