/// Millisecond timestamps and their RFC 3339 form, parsed and printed by hand because the
/// ingest hot path sees one per record and Foundation's formatters are far slower.
public enum Timestamp {
    /// Parses RFC 3339 / ISO 8601 (`2026-11-21T10:15:30.123Z`, `+01:00` offsets, a space
    /// instead of `T`, up to 9 fraction digits, no zone = UTC). Returns epoch milliseconds, or
    /// nil for text that is not a real instant (see ``check(bytes:)``).
    public static func parse<S: StringProtocol>(_ text: S) -> Int64? {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { parse(bytes: UnsafeBufferPointer($0)) }
    }

    /// Same as `parse(_:)`, over raw bytes.
    public static func parse(bytes b: UnsafeBufferPointer<UInt8>) -> Int64? {
        if case .success(let ms) = check(bytes: b) { return ms }
        return nil
    }

    /// Why a text is not a time the daemon takes, in words a client developer can act on.
    public struct Invalid: Error, Sendable, Hashable {
        public let reason: String
    }

    /// Same as `parse(_:)`, saying why a text is refused: not RFC 3339 at all, or a date or
    /// offset that does not exist (`2026-02-31`, hour 24, minute 60, offset `+99:00`).
    public static func check<S: StringProtocol>(_ text: S) -> Result<Int64, Invalid> {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBufferPointer { check(bytes: UnsafeBufferPointer($0)) }
    }

    /// Same as `check(_:)`, over raw bytes. Seconds may be 60 (a leap second, RFC 3339 5.6);
    /// offsets are bounded to ±18:00, the widest any zone database or ISO 8601 profile uses.
    public static func check(bytes b: UnsafeBufferPointer<UInt8>) -> Result<Int64, Invalid> {
        let notRFC3339 = Invalid(reason: "not RFC 3339 (2026-11-21T10:15:30.123Z)")
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in 0..<n {
                let c = b[i + k]
                guard c >= 48 && c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            i += n
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2),
            expect(UInt8(ascii: "-")), let day = digits(2)
        else { return .failure(notRFC3339) }
        guard i < b.count, b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: "t") || b[i] == 32
        else { return .failure(notRFC3339) }
        i += 1
        guard let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2),
            expect(UInt8(ascii: ":")), let second = digits(2)
        else { return .failure(notRFC3339) }
        guard (1...12).contains(month) else { return .failure(Invalid(reason: "month \(month) does not exist")) }
        let monthDays = daysIn(month: month, year: year)
        guard (1...monthDays).contains(day) else {
            return .failure(Invalid(reason: "day \(day) does not exist in \(pad(year, 4))-\(pad(month, 2)), which has \(monthDays) days"))
        }
        guard hour < 24 else { return .failure(Invalid(reason: "hour \(hour) is out of range 00-23")) }
        guard minute < 60 else { return .failure(Invalid(reason: "minute \(minute) is out of range 00-59")) }
        guard second <= 60 else { return .failure(Invalid(reason: "second \(second) is out of range 00-60")) }
        var millis = 0
        if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
            i += 1
            var scale = 100
            var count = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if scale > 0 {
                    millis += Int(b[i] - 48) * scale
                    scale /= 10
                }
                i += 1
                count += 1
            }
            guard count > 0 else { return .failure(notRFC3339) }
        }
        var offsetSeconds = 0
        if i < b.count {
            let c = b[i]
            if c == UInt8(ascii: "Z") || c == UInt8(ascii: "z") {
                i += 1
            } else if c == UInt8(ascii: "+") || c == UInt8(ascii: "-") {
                i += 1
                guard let oh = digits(2) else { return .failure(notRFC3339) }
                _ = expect(UInt8(ascii: ":"))
                let om = digits(2) ?? 0
                let sign = c == UInt8(ascii: "+") ? "+" : "-"
                guard om < 60, oh * 60 + om <= maxOffsetMinutes else {
                    return .failure(Invalid(reason: "offset \(sign)\(pad(oh, 2)):\(pad(om, 2)) is beyond ±18:00"))
                }
                offsetSeconds = (oh * 3600 + om * 60) * (sign == "+" ? 1 : -1)
            }
        }
        guard i == b.count else { return .failure(notRFC3339) }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return .success(Int64(seconds) * 1000 + Int64(millis))
    }

    /// The widest UTC offset accepted, in minutes (ISO 8601 / java.time's bound).
    public static let maxOffsetMinutes = 18 * 60

    /// Days in a month of the proleptic Gregorian calendar.
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The times the daemon accepts: years 0001 to 9999, what RFC 3339 can print. Anything
    /// outside is a client bug, refused rather than trapped on or stored.
    public static let acceptedRange: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// Prints epoch milliseconds as `2026-11-21T10:15:30.123Z` (floor division, so negative
    /// times print correctly and no input can overflow).
    public static func format(milliseconds ms: Int64) -> String {
        let (q, r) = ms.quotientAndRemainder(dividingBy: 1000)
        let totalSeconds = Int(r < 0 ? q - 1 : q)
        let millis = Int(r < 0 ? r + 1000 : r)
        var days = totalSeconds / 86_400
        var secs = totalSeconds % 86_400
        if secs < 0 {
            secs += 86_400
            days -= 1
        }
        let (y, m, d) = civilFromDays(days)
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(secs / 3600, 2)):\(pad(secs / 60 % 60, 2)):"
            + "\(pad(secs % 60, 2)).\(pad(millis, 3))Z"
    }

    /// `v` as at least `n` digits, zero-padded.
    static func pad(_ v: Int, _ n: Int) -> String {
        let s = String(v)
        return s.count >= n ? s : String(repeating: "0", count: n - s.count) + s
    }

    /// Howard Hinnant's days-from-civil: proleptic Gregorian date to days since 1970-01-01.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
