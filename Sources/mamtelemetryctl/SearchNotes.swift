import Foundation

/// What a query page's `search` member tells a person, printed under a table: how a typed
/// device id was resolved, which devices a user's query took in, and — for an empty page —
/// what was searched and which device ids come close.
enum SearchNotes {
    static func lines(_ page: [String: Any], kind: String, empty: Bool) -> [String] {
        guard let search = page["search"] as? [String: Any] else { return [] }
        var out: [String] = []
        let device = search["device"] as? [String: Any]
        if let device, let asked = device["asked"] as? String, let searched = device["searched"] as? String {
            switch device["match"] as? String {
            case "caseInsensitive": out.append("device \(asked): matched \(searched) (ignoring case)")
            case "prefix": out.append("device \(asked): matched \(searched) (the one id starting with it)")
            default: break
            }
        }
        if let identity = search["identity"] as? [String: Any], let devices = identity["devices"] as? [String], !devices.isEmpty,
            identity["expanded"] as? Bool == true
        {
            out.append(
                "user \(identity["identity"] as? String ?? "?"): with the records of the devices they used: \(devices.joined(separator: ", "))"
            )
        }
        guard empty else { return out }
        var what: [String] = []
        if let device { what.append("device \(device["searched"] as? String ?? "?")") }
        if let identity = search["identity"] as? [String: Any] { what.append("user \(identity["identity"] as? String ?? "?")") }
        for (name, value) in (search["filters"] as? [String: String] ?? [:]).sorted(by: { $0.key < $1.key }) {
            what.append("\(name) \(value)")
        }
        if let around = search["around"] as? String {
            what.append("around \(around) (±\(search["span"] as? String ?? "2m"))")
        } else if search["since"] != nil || search["until"] != nil {
            what.append("from \(search["since"] as? String ?? "the start") to \(search["until"] as? String ?? "now")")
        }
        out.append(
            "no \(kind) matched in \(search["env"] as? String ?? "prod")" + (what.isEmpty ? "" : ": " + what.joined(separator: ", ")))
        let near = (device?["suggestions"] as? [[String: Any]] ?? []).compactMap { $0["deviceId"] as? String }
        if !near.isEmpty { out.append("no device has that id; nearest ids: \(near.joined(separator: ", "))") }
        return out
    }
}
