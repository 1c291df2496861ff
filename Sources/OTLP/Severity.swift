import TelemetryModel

typealias SeverityNumber = Opentelemetry_Proto_Logs_V1_SeverityNumber

extension LogLevel {
    /// The SDK level for an OTLP severity: the number's range when it is set (TRACE and
    /// DEBUG 1-8 are `verbose`, INFO 9-12, WARN 13-16, ERROR and FATAL 17-24), otherwise the
    /// text by the same names and aliases console exports use, otherwise `info` — like a
    /// console line whose level cannot be read, the record is kept, never refused for it.
    init(severity number: SeverityNumber, text: String) {
        switch number.rawValue {
        case 1...8: self = .verbose
        case 9...12: self = .info
        case 13...16: self = .warning
        case 17...24: self = .error
        default: self = LogLevel(severityText: text) ?? .info
        }
    }

    /// Severity text as the common logging libraries spell it (`WARN`, `Information`,
    /// `CRITICAL`, `Debug2`...): the trailing digit of OTLP's short names is ignored.
    init?(severityText text: String) {
        var name = Substring(text)
        while let last = name.last, last.isNumber { name = name.dropLast() }
        guard let level = LogLevel(name: String(name)) else { return nil }
        self = level
    }
}
