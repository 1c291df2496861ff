import Foundation
import TelemetryModel

typealias AnyValue = Opentelemetry_Proto_Common_V1_AnyValue
typealias KeyValue = Opentelemetry_Proto_Common_V1_KeyValue

extension AnyValue {
    /// Appends the value as JSON: scalars as themselves, arrays and key-value lists as JSON
    /// arrays and objects, bytes as base64, non-finite doubles as strings (JSON has no NaN).
    /// A value that is unset, or only a profiles string-table reference, is `null`.
    func appendJSON(to out: inout [UInt8]) {
        switch value {
        case .stringValue(let s)?: JSONWriter.appendString(s, to: &out)
        case .boolValue(let b)?: out.append(contentsOf: (b ? "true" : "false").utf8)
        case .intValue(let i)?: out.append(contentsOf: String(i).utf8)
        case .doubleValue(let d)?:
            if d.isFinite { out.append(contentsOf: "\(d)".utf8) } else { JSONWriter.appendString("\(d)", to: &out) }
        case .arrayValue(let a)?:
            out.append(UInt8(ascii: "["))
            for (i, element) in a.values.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                element.appendJSON(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .kvlistValue(let list)?: KeyValue.appendObject(list.values, to: &out)
        case .bytesValue(let data)?: JSONWriter.appendString(data.base64EncodedString(), to: &out)
        case .stringValueStrindex?, nil: out.append(contentsOf: "null".utf8)
        }
    }

    var json: [UInt8] {
        var out: [UInt8] = []
        appendJSON(to: &out)
        return out
    }

    /// The text of a scalar, for fields that are strings in our records (ids, versions):
    /// `nil` for containers, bytes and unset values.
    var scalarText: String? {
        switch value {
        case .stringValue(let s)?: s
        case .boolValue(let b)?: b ? "true" : "false"
        case .intValue(let i)?: String(i)
        case .doubleValue(let d)?: "\(d)"
        default: nil
        }
    }

    /// The value as a MAM flag: booleans, numbers, and the plist-style strings the native
    /// `settings` object accepts ("YES"/"NO", "true"/"false", "1"/"0"); anything else is
    /// "not said".
    var flag: Bool? {
        switch value {
        case .boolValue(let b)?: b
        case .intValue(let i)?: i != 0
        case .doubleValue(let d)?: d != 0
        case .stringValue(let s)?: FlagValue.string(s).boolValue
        default: nil
        }
    }
}

extension KeyValue {
    /// Whether the pair names its key: a profiles string-table key (`key_strindex`) does not
    /// apply to logs and is treated as absent, as the OTLP spec asks of non-profile receivers.
    var hasKey: Bool { !key.isEmpty || keyStrindex == 0 }

    /// Appends `pairs` as one JSON object.
    static func appendObject(_ pairs: [KeyValue], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "{"))
        var first = true
        for pair in pairs where pair.hasKey {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            JSONWriter.appendString(pair.key, to: &out)
            out.append(UInt8(ascii: ":"))
            pair.value.appendJSON(to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }
}
