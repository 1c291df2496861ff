import TelemetryModel
import Testing

/// A realistic diagnostic-console export, including lines that cannot be parsed.
@Suite struct TextLogLineTests {
    @Test func parsesTheCommonExportShapes() {
        let a = TextLogLine.parse("2026-11-21T10:15:30.123Z [WARNING] [PolicyManager] Policy check-in failed")
        #expect(a.level == .warning)
        #expect(a.component == "PolicyManager")
        #expect(a.message == "Policy check-in failed")
        #expect(a.time == Timestamp.parse("2026-11-21T10:15:30.123Z"))

        let b = TextLogLine.parse("2026-11-21 10:15:30.123 INFO IntuneMAM: enrollment started")
        #expect(b.level == .info)
        #expect(b.component == "IntuneMAM")
        #expect(b.message == "enrollment started")

        let c = TextLogLine.parse("2026-11-21 10:15:30.123456+0000 MyApp[412:9921] <Error> [Enrollment] token expired")
        #expect(c.level == .error)
        #expect(c.component == "Enrollment")
        #expect(c.message == "token expired")
        #expect(c.time == Timestamp.parse("2026-11-21T10:15:30.123Z"))

        let d = TextLogLine.parse("2026-11-21T10:15:30Z verbose user jane@contoso.com signed in")
        #expect(d.level == .verbose)
    }

    @Test func unparseableLinesAreKeptAsInfoWithTheRawText() throws {
        let raw = "   *** stack trace follows ***"
        let p = TextLogLine.parse(raw)
        #expect(p.level == .info)
        #expect(p.time == nil)
        #expect(p.message == raw)

        let decoder = LogRecordDecoder()
        let body = Array("2026-11-21T10:00:00Z ERROR boom\nnot a log line at all\n\n{\"json\": true}\n".utf8)
        let (records, rejected) = try decoder.decodeText(body: body, defaults: LogDefaults(appId: "app", deviceId: "dev"), receivedAt: 7)
        #expect(rejected.isEmpty)
        #expect(records.count == 3)
        #expect(records[0].keys.level == .error)
        #expect(records[1].keys.level == .info)
        #expect(records[1].message == "not a log line at all")
        #expect(records[1].keys.time == 7)
        #expect(records[2].message == "{\"json\": true}")
        #expect(records.allSatisfy { $0.keys.deviceId == "dev" && $0.keys.appId == "app" })
    }
}
