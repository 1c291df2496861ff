import Systemd
import TelemetryModel
import Testing

@Suite("JournalEntry")
struct JournalEntryTests {
    static let keys = RecordKeys(
        time: 1_795_000_000_123, appId: "com.contoso.mail", deviceId: "dev-1", sessionId: "sess-9",
        identity: "user@contoso.com", detail: "EnrollmentManager", level: .warning,
        incident: "MAM-7K2Q-9XPF")

    @Test(
        "priority and level follow the SDK level",
        arguments: [
            (LogLevel.error, "3"), (LogLevel.warning, "4"), (LogLevel.info, "6"), (LogLevel.verbose, "7"),
        ])
    func priorityPerLevel(level: LogLevel, priority: String) {
        var keys = Self.keys
        keys.level = level
        let entry = JournalEntry.logRecord(keys: keys, message: "m", env: .prod, identityHash: nil)
        #expect(entry.value(of: "PRIORITY") == priority)
        #expect(entry.value(of: "MAM_LEVEL") == level.name)
    }

    @Test("a full record carries every field, in order")
    func fullRecord() {
        let entry = JournalEntry.logRecord(
            keys: Self.keys, message: "enroll failed\nretrying", env: .ppe, identityHash: "h:3f2a")
        #expect(
            entry.fields.map(\.name) == [
                "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "MAM_APP_ID", "MAM_DEVICE_ID", "MAM_SESSION_ID",
                "MAM_ENV", "MAM_LEVEL", "MAM_COMPONENT", "MAM_EVENT_TIME", "MAM_INCIDENT_ID", "MAM_IDENTITY_HASH",
            ])
        #expect(entry.value(of: "MESSAGE") == "enroll failed\nretrying")
        #expect(entry.value(of: "SYSLOG_IDENTIFIER") == "mamtelemetryd")
        #expect(entry.value(of: "MAM_APP_ID") == "com.contoso.mail")
        #expect(entry.value(of: "MAM_DEVICE_ID") == "dev-1")
        #expect(entry.value(of: "MAM_SESSION_ID") == "sess-9")
        #expect(entry.value(of: "MAM_ENV") == "ppe")
        #expect(entry.value(of: "MAM_COMPONENT") == "EnrollmentManager")
        #expect(entry.value(of: "MAM_EVENT_TIME") == "2026-11-18T11:06:40.123Z")
        #expect(entry.value(of: "MAM_INCIDENT_ID") == "MAM-7K2Q-9XPF")
        #expect(entry.value(of: "MAM_IDENTITY_HASH") == "h:3f2a")
    }

    @Test("the raw identity is never written, in any field or casing")
    func noRawIdentity() {
        for hash in [nil, "h:3f2a"] as [String?] {
            let entry = JournalEntry.logRecord(keys: Self.keys, message: "m", env: .prod, identityHash: hash)
            for field in entry.fields {
                #expect(!field.text.lowercased().contains("user@contoso.com"), "in \(field.name)")
            }
            #expect(entry.value(of: "MAM_IDENTITY") == nil)
        }
    }

    @Test("empty keys are left out; a record without a level is info")
    func sparseRecord() {
        let keys = RecordKeys(time: 0, appId: "com.contoso.mail")
        let entry = JournalEntry.logRecord(keys: keys, message: "", env: .prod, identityHash: "")
        #expect(
            entry.fields.map(\.name) == [
                "MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "MAM_APP_ID", "MAM_ENV", "MAM_LEVEL", "MAM_EVENT_TIME",
            ])
        #expect(entry.value(of: "PRIORITY") == "6")
        #expect(entry.value(of: "MAM_LEVEL") == "info")
        #expect(entry.value(of: "MAM_EVENT_TIME") == "1970-01-01T00:00:00.000Z")
    }

    @Test("a decoded record is mirrored with the message the decoder kept")
    func decodedRecord() {
        let record = DecodedRecord(
            json: Array(#"{"message":"x"}"#.utf8), keys: Self.keys, flags: AppFlags(), eventId: nil,
            message: "from decoder")
        let entry = JournalEntry.logRecord(record, env: .prod, identityHash: nil)
        #expect(entry.value(of: "MESSAGE") == "from decoder")
        #expect(entry.value(of: "PRIORITY") == "4")
    }

    @Test("values are binary-safe and names may repeat")
    func binaryValues() {
        var entry = JournalEntry()
        entry.append("MAM_BLOB", bytes: [0, 10, 61, 255])
        entry.append("MAM_TAG", "a")
        entry.append("MAM_TAG", "b=c")
        #expect(entry.count == 3)
        #expect(entry.fields[0] == JournalField(name: "MAM_BLOB", value: [0, 10, 61, 255]))
        #expect(entry.values(of: "MAM_TAG") == ["a", "b=c"])
        #expect(JournalEntry(fields: entry.fields) == entry)
    }

    @Test(
        "metadata keys become valid journal field names",
        arguments: [
            ("request.id", "MAM_REQUEST_ID"), ("MESSAGE_ID", "MESSAGE_ID"), ("message_id", "MESSAGE_ID"),
            ("_pid", "MAM__PID"), ("9lives", "MAM_9LIVES"), ("über", "MAM___BER"),
            (String(repeating: "k", count: 80), "MAM_" + String(repeating: "K", count: 60)),
        ])
    func fieldNames(key: String, expected: String) {
        let name = JournalFieldName.forMetadataKey(key)
        #expect(name == expected)
        #expect(JournalFieldName.isValid(name))
    }

    @Test("journald's name rules")
    func nameRules() {
        #expect(JournalFieldName.isValid("MAM_APP_ID"))
        #expect(!JournalFieldName.isValid("_PID"))
        #expect(!JournalFieldName.isValid("1ABC"))
        #expect(!JournalFieldName.isValid("mam_app"))
        #expect(!JournalFieldName.isValid(""))
        #expect(!JournalFieldName.isValid(String(repeating: "A", count: 65)))
    }
}
