import Foundation
import TestSupport
import Testing

@testable import TelemetryModel

/// Every accepted record is stored in one spelling the daemon writes (`CanonicalJSON`), and what
/// has no such spelling is refused per line naming the member. Generated records, spelled as a
/// client might, are checked against a canonical writer written here from the documented rule
/// and against Foundation's JSON decoder (same structure in and out).
@Suite struct CanonicalFormTests {
    static func foundation(_ bytes: [UInt8]) throws -> NSObject {
        try JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]) as! NSObject
    }

    /// A record the event decoder accepts, with `members` generated around its two required ones.
    static func record(_ random: inout SeededRandom) -> GeneratedJSON {
        guard case .object(let members) = GeneratedJSON.object(&random, depth: 3, members: random.below(6)) else { fatalError() }
        return .object([("name", .string("Custom")), ("appId", .string("com.contoso.app"))] + members)
    }

    @Test func storedRecordsAreTheCanonicalSpellingOfWhatWasSent() throws {
        var random = SeededRandom(seed: PropertyScale.seed(23))
        for _ in 0..<PropertyScale.cases(60) {
            let records = (0..<1 + random.below(4)).map { _ in Self.record(&random) }
            let asArray = random.below(2) == 0
            let spelled = records.map { $0.spelled(&random, lineBreaks: asArray) }
            let body = asArray ? "[" + spelled.joined(separator: ",\n") + "]" : spelled.joined(separator: "\n")
            let (decoded, rejected) = try TelemetryEventDecoder().decode(body: Array(body.utf8), receivedAt: 0)
            #expect(rejected.isEmpty, "\(rejected) in \(body)")
            try #require(decoded.count == records.count)
            for (k, record) in decoded.enumerated() {
                let stored = record.json
                let input = Array(spelled[k].utf8)
                // The stored bytes are exactly the rule's spelling of the generated value...
                #expect(String(decoding: stored, as: UTF8.self) == records[k].canonical, "sent \(spelled[k])")
                // ...what the public canonicalizer makes of the input, and a fixed point of it.
                #expect(try CanonicalJSON.canonicalize(input).get() == stored)
                #expect(try CanonicalJSON.canonicalize(stored).get() == stored)
                // Foundation reads the same structure and values in what was sent and what is stored.
                #expect(try Self.foundation(input).isEqual(try Self.foundation(stored)), "sent \(spelled[k])")
            }
        }
    }

    @Test func duplicatesLoneSurrogatesAndOverflowingNumbersAreRefusedNamingTheMember() throws {
        var random = SeededRandom(seed: PropertyScale.seed(2323))
        let surrogates = [#""a\uD83Db""#, #""\udc00""#, #""x\uDBFF""#, #""\uD800\uD800""#, #""\uDE00\uD83D""#]
        let overflowing = ["1e400", "-1e309", "123e999999999", "1.8E+308", String(repeating: "9", count: 400), "-0.1e310"]
        for _ in 0..<PropertyScale.cases(150) {
            let record = Self.record(&random)
            let objects = record.objects()
            let target = random.below(objects.count)
            let (path, members) = objects[target]
            let fault: (member: (String, GeneratedJSON), expected: String)
            switch random.below(3) {
            case 0 where !members.isEmpty:
                // The same name again, spelled its own way.
                let name = random.pick(members).0
                fault = ((name, .null), "duplicate member \(path.isEmpty ? name : path + "." + name):")
            case 0, 1:
                let name = "zz_lone"
                fault = ((name, .verbatim(random.pick(surrogates))), "\(path.isEmpty ? name : path + "." + name): invalid Unicode")
            default:
                let name = "zz_big"
                fault = ((name, .verbatim(random.pick(overflowing))), "\(path.isEmpty ? name : path + "." + name): the number")
            }
            let planted = record.adding(fault.member, toObject: target)
            let text = planted.spelled(&random)
            let (decoded, rejected) = try TelemetryEventDecoder().decode(body: Array(text.utf8), receivedAt: 0)
            #expect(decoded.isEmpty, "accepted \(text)")
            #expect(rejected.count == 1 && rejected[0].error.hasPrefix(fault.expected), "\(rejected) for \(text)")
            guard case .failure(let refusal) = CanonicalJSON.canonicalize(Array(text.utf8)) else {
                Issue.record("canonicalized \(text)")
                continue
            }
            #expect(refusal.reason.hasPrefix(fault.expected))
        }
    }

    @Test func theIssuesSpellingsAreStoredInTheirOneForm() throws {
        let cases: [(sent: String, stored: String)] = [
            (
                #"{"name":"X","appId":"a","us\u0065r":"dave\u0040contoso.com","note":"for alice\u0040contoso.com"}"#,
                #"{"name":"X","appId":"a","user":"dave@contoso.com","note":"for alice@contoso.com"}"#
            ),
            (
                #"{"name":"X","appId":"a","identit\u0079":"bob.smith","u":"https:\/\/x\/y"}"#,
                #"{"name":"X","appId":"a","identity":"bob.smith","u":"https://x/y"}"#
            ),
            (
                #"{"name":"X","appId":"a","m":"\u00e9\u65E5\ud83d\ude00 \u001F\u001f\u0008\u000A\/"}"#,
                "{\"name\":\"X\",\"appId\":\"a\",\"m\":\"é日😀 \\u001f\\u001f\\b\\n/\"}"
            ),
            (
                #"{ "name" : "X", "appId" : "a", "kept" : "line\nbreak \"quoted\" \\ \t" }"#,
                #"{"name":"X","appId":"a","kept":"line\nbreak \"quoted\" \\ \t"}"#
            ),
        ]
        for (sent, stored) in cases {
            let (records, rejected) = try TelemetryEventDecoder().decode(body: Array(sent.utf8), receivedAt: 0)
            #expect(rejected.isEmpty, "\(rejected)")
            #expect(records.first.map { String(decoding: $0.json, as: UTF8.self) } == stored)
        }
        // The identity spelled with escapes is indexed (and so filtered) under its one spelling.
        let (records, _) = try TelemetryEventDecoder().decode(
            body: Array(#"{"name":"X","appId":"a","identit\u0079":"B\u006Fb@contoso.com"}"#.utf8), receivedAt: 0)
        #expect(records.first?.keys.identity == "bob@contoso.com")
    }

    @Test func duplicateMembersAreRefusedAtEveryDepthAndInUploads() throws {
        for (text, path) in [
            (#"{"name":"X","appId":"a","appId":"b"}"#, "appId"),
            (#"{"name":"X","appId":"a","app\u0049d":"b"}"#, "appId"),
            (#"{"name":"X","appId":"a","data":{"statusCode":1,"statusCode":2}}"#, "data.statusCode"),
            (#"{"name":"X","appId":"a","args":[{"c":1},{"x":{"y":1,"y":2}}]}"#, "args[1].x.y"),
        ] {
            let (records, rejected) = try TelemetryEventDecoder().decode(body: Array(text.utf8), receivedAt: 0)
            #expect(records.isEmpty)
            #expect(rejected.first?.error == "duplicate member \(path): a member name may appear only once in an object")
        }
        // A log record inside an upload is refused alone; the upload's own members are checked too.
        #expect(throws: DiagnosticUpload.Invalid.self) {
            try DiagnosticUpload(json: Array(#"{"appId":"a","appId":"b","description":"x"}"#.utf8), limits: .default)
        }
        #expect(throws: DiagnosticUpload.Invalid.self) {
            try DiagnosticUpload(json: Array(#"{"appId":"a","description":"\ud800"}"#.utf8), limits: .default)
        }
        let upload = try DiagnosticUpload(
            json: Array(#"{"appId":"a","logs":[{"message":"ok"},{"message":"x","message":"y"}]}"#.utf8), limits: .default)
        let (logs, refused) = try LogRecordDecoder().decodeJSON(body: upload.logs, defaults: LogDefaults(appId: "a"), receivedAt: 0)
        #expect(logs.count == 1)
        #expect(refused.map(\.line) == [2])
    }

    @Test func aDefaultTakesThePlaceOfANullMemberRatherThanDoublingIt() throws {
        let body = Array(#"{"message":"m","appId":null,"deviceId":null,"identity":"u@x"}"#.utf8)
        let (records, rejected) = try LogRecordDecoder().decodeJSON(
            body: body, defaults: LogDefaults(appId: "com.a", deviceId: "dev", sessionId: "s", identity: "other@x"), receivedAt: 0)
        #expect(rejected.isEmpty)
        let stored = try #require(records.first).json
        #expect(
            String(decoding: stored, as: UTF8.self) == #"{"sessionId":"s","message":"m","appId":"com.a","deviceId":"dev","identity":"u@x"}"#
        )
        #expect(try CanonicalJSON.canonicalize(stored).get() == stored)
    }

    @Test func textLinesAreWrittenInTheCanonicalSpelling() throws {
        let line = "2026-11-21T10:15:30.123Z [INFO] [X] a\u{8}b\u{C}c\u{1}d/é \"q\" \\"
        let (records, _) = try LogRecordDecoder().decodeText(body: Array(line.utf8), defaults: LogDefaults(appId: "a"), receivedAt: 0)
        let stored = try #require(records.first).json
        #expect(try CanonicalJSON.canonicalize(stored).get() == stored)
        #expect(String(decoding: stored, as: UTF8.self).contains(#""message":"a\bb\fc\u0001d/é \"q\" \\""#))
    }

    /// Records an older version stored may hold lone surrogates and numbers past a double's
    /// range; readers are given them repaired, in a form Foundation reads, and nothing else changes.
    @Test func storedRecordsOfOlderVersionsAreRepairedForReaders() throws {
        func repaired(_ text: String) -> String? {
            Array(text.utf8).withUnsafeBufferPointer { CanonicalJSON.repairing(stored: $0) }.map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(repaired(#"{"a":"x\ud800y","d":1e400,"n":-1e309,"ok":1e5}"#) == #"{"a":"x�y","d":"1e400","n":"-1e309","ok":1e5}"#)
        #expect(repaired(#"{"a":"\uDE00\uD83D\uDE00"}"#) == #"{"a":"�😀"}"#)
        #expect(repaired(#"{"a":"plain","t":true,"f":false,"n":12.5,"s":"\n\"\\"}"#) == nil)
        #expect(repaired(#"{"a":"\u00e9","b":"3e5 in a string"}"#) == nil, "canonical enough for every reader: left alone")
        var random = SeededRandom(seed: PropertyScale.seed(77))
        for _ in 0..<PropertyScale.cases(100) {
            let record = Self.record(&random)
            let (fault, meant) = random.pick([(#""\ud800""#, "\u{FFFD}"), ("1e400", "1e400"), (#""a\uDC00""#, "a\u{FFFD}")])
            let legacy = record.adding(("zz", .verbatim(fault)), toObject: 0)
            let bytes = Array(legacy.canonical.utf8)
            let readable = try #require(bytes.withUnsafeBufferPointer { CanonicalJSON.repairing(stored: $0) }, "\(legacy.canonical)")
            let expected = record.adding(("zz", .string(meant)), toObject: 0)
            #expect(String(decoding: readable, as: UTF8.self) == expected.canonical)
            #expect(try Self.foundation(readable).isEqual(try Self.foundation(Array(expected.canonical.utf8))))
        }
    }
}
