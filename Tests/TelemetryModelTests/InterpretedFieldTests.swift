import Foundation
import Testing

@testable import TelemetryModel

/// The numbers the daemon interprets have a declared type and range (`InterpretedField`);
/// ingest refuses a line outside them naming the field and the range, and takes everything
/// inside them whatever JSON spelling it came in.
@Suite struct InterpretedFieldTests {
    static func decode(_ data: String, top: String = "") throws -> (DecodedRecord?, String?) {
        let line = #"{"name":"EnrollmentCall","appId":"a"\#(top),"data":{\#(data)}}"#
        let (records, rejected) = try TelemetryEventDecoder().decode(body: Array(line.utf8), receivedAt: 0)
        return (records.first, rejected.first?.error)
    }

    @Test func statusCodeIsAThirtyTwoBitIntegerInAnyNumberSpelling() throws {
        for (spelling, code) in [
            ("200", 200), ("2e2", 200), ("200.0", 200), ("\"203\"", 203), ("-0", 0), ("2147483647", 2_147_483_647),
            ("-2147483648", -2_147_483_648),
        ] {
            let (record, error) = try Self.decode(#""statusCode":\#(spelling)"#)
            #expect(error == nil && record?.keys.statusCode == code, "\(spelling): \(error ?? "")")
        }
        for spelling in [
            "-9223372036854775808", "\"-9223372036854775808\"", "9223372036854775807", "9223372036854775808", "18446744073709551616",
            "2147483648", "-2147483649", "1e308", "\"1e19\"", String(repeating: "9", count: 300),
        ] {
            let (record, error) = try Self.decode(#""statusCode":\#(spelling)"#)
            #expect(record == nil)
            #expect(
                error?.hasPrefix("data.statusCode: ") == true
                    && error?.contains("outside the accepted range -2147483648...2147483647") == true,
                "\(spelling): \(error ?? "accepted")")
        }
        for spelling in ["200.5", "\"NaN\"", "\"Infinity\"", "\"-Infinity\"", "\"0x10\"", "\" 200\"", "true", "{}", "[200]", "\"\""] {
            let (record, error) = try Self.decode(#""statusCode":\#(spelling)"#)
            #expect(
                record == nil && error?.hasPrefix("data.statusCode: expected an integer") == true, "\(spelling): \(error ?? "accepted")")
        }
        // At the top level the refusal names that member.
        let (_, top) = try Self.decode("", top: #","statusCode":-9223372036854775808"#)
        #expect(top?.hasPrefix("statusCode: -9223372036854775808 is outside") == true)
    }

    @Test func durationIsFiniteNonNegativeAndAtMostSevenDays() throws {
        for (spelling, ms) in [
            ("0", 0.0), ("-0", 0.0), ("5e-324", Double.leastNonzeroMagnitude), ("812.5", 812.5), ("\"90\"", 90.0),
            ("604800000", 604_800_000.0),
        ] {
            let (record, error) = try Self.decode(#""durationMs":\#(spelling)"#)
            #expect(error == nil && record?.keys.durationMs == ms, "\(spelling): \(error ?? "")")
        }
        for spelling in ["1e19", "-1", "-5e-324", "604800000.5", "1e308", "-1e308", "\"1e19\"", "9223372036854775808"] {
            let (record, error) = try Self.decode(#""durationMs":\#(spelling)"#)
            #expect(
                record == nil && error?.contains("data.durationMs: ") == true && error?.contains("0...604800000") == true,
                "\(spelling): \(error ?? "accepted")")
        }
        for spelling in ["\"NaN\"", "\"Infinity\"", "\"-Infinity\"", "\"inf\"", "\"nan\"", "\"1e400\"", "false"] {
            let (record, error) = try Self.decode(#""durationMs":\#(spelling)"#)
            #expect(record == nil && error?.hasPrefix("data.durationMs: ") == true, "\(spelling): \(error ?? "accepted")")
        }
        // Past a double's range a number is refused wherever it stands, as JSON.
        let (record, error) = try Self.decode(#""durationMs":1e400"#)
        #expect(
            record == nil && error?.hasPrefix("data.durationMs: the number 1e400 is outside the range of a double") == true,
            "\(error ?? "")")
    }

    @Test func timesMustBeRealInstantsOfTheAcceptedYears() throws {
        for (text, reason) in [
            ("2026-02-31T10:00:00Z", "day 31 does not exist in 2026-02, which has 28 days"),
            ("2025-02-29T10:00:00Z", "day 29 does not exist in 2025-02, which has 28 days"),
            ("2026-04-31T10:00:00Z", "day 31 does not exist in 2026-04, which has 30 days"),
            ("2026-13-01T10:00:00Z", "month 13 does not exist"),
            ("2026-00-01T10:00:00Z", "month 0 does not exist"),
            ("2026-01-00T10:00:00Z", "day 0 does not exist in 2026-01, which has 31 days"),
            ("2026-01-01T24:00:00Z", "hour 24 is out of range 00-23"),
            ("2026-01-01T10:60:00Z", "minute 60 is out of range 00-59"),
            ("2026-01-01T10:00:61Z", "second 61 is out of range 00-60"),
            ("2026-01-01T10:00:00+99:00", "offset +99:00 is beyond ±18:00"),
            ("2026-01-01T10:00:00-18:01", "offset -18:01 is beyond ±18:00"),
            ("2026-01-01T10:00:00+05:60", "offset +05:60 is beyond ±18:00"),
            ("2026-01-01", "not RFC 3339 (2026-11-21T10:15:30.123Z)"),
        ] {
            #expect(Timestamp.check(text) == .failure(Timestamp.Invalid(reason: reason)), "\(text)")
            let (record, error) = try Self.decode("", top: #","time":"\#(text)""#)
            #expect(record == nil && error == "time: \(text): \(reason)")
        }
        for text in [
            "2024-02-29T23:59:59.999Z", "2000-02-29T00:00:00Z", "2026-06-30T23:59:60Z", "2026-01-01T10:00:00+18:00",
            "2026-01-01T10:00:00-1800", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z",
        ] {
            #expect(Timestamp.parse(text) != nil, "\(text)")
            let (_, error) = try Self.decode("", top: #","time":"\#(text)""#)
            #expect(error == nil, "\(text): \(error ?? "")")
        }
        for spelling in ["-9223372036854775808", "9223372036854775807", "253402300800000", "1e300", "\"0000-12-31T23:59:59Z\""] {
            let (record, error) = try Self.decode("", top: #","time":\#(spelling)"#)
            #expect(
                record == nil && error?.hasPrefix("time: ") == true && error?.contains("outside the accepted range") == true,
                "\(spelling): \(error ?? "accepted")")
        }
    }

    @Test func theTableHoldsEveryInterpretedFieldOnce() {
        #expect(Set(InterpretedField.all.map(\.name)).count == InterpretedField.all.count)
        #expect(InterpretedField.statusCode.rangeText == "-2147483648...2147483647")
        #expect(InterpretedField.durationMs.rangeText == "0...604800000")
        #expect(!InterpretedField.durationMs.contains(Double.nan) && !InterpretedField.time.contains(Double.infinity))
        // 2^63 (what Double(Int64.max) rounds to) is outside every integer row.
        #expect(!InterpretedField.timeUnixNano.contains(9.223372036854775808e18))
        #expect(InterpretedField.timeUnixNano.contains(9.2e18))
    }
}
