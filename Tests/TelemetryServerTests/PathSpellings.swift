import Foundation

/// Ways an attacker may spell one path so that a router and a separate path check disagree:
/// doubled, leading and trailing slashes, `.`/`..` segments, percent-encoding, case, and
/// `;`/`?` suffixes. Deterministic, so a failure names the exact spelling.
enum PathSpellings {
    static func of(_ path: String) -> [String] {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        var out: [String] = [path]
        func join(_ s: [String]) -> String { "/" + s.joined(separator: "/") }
        out.append("/" + path)
        out.append(path + "/")
        out.append(path + "//")
        out.append(path.replacingOccurrences(of: "/", with: "//"))
        out.append(join(segments.flatMap { [$0, "."] }))
        out.append(join(["."] + segments))
        if segments.count > 1 {
            out.append(join([segments[0], "x", ".."] + segments.dropFirst()))
            out.append(join(Array(segments.dropLast()) + ["..", segments.last!, segments.last!]))
            out.append(join(Array(segments.prefix(1))) + "//" + segments.dropFirst().joined(separator: "/"))
        }
        out.append(path.uppercased())
        out.append(path.prefix(1) + path.dropFirst().prefix(1).uppercased() + path.dropFirst(2))
        // Percent-encode the first letter of each segment in turn, and every slash.
        for (i, seg) in segments.enumerated() {
            guard let first = seg.unicodeScalars.first, first.isASCII else { continue }
            var s = segments
            s[i] = "%" + String(first.value, radix: 16, uppercase: true) + seg.dropFirst()
            out.append(join(s))
        }
        out.append(path.replacingOccurrences(of: "/", with: "%2F"))
        out.append("/" + segments.joined(separator: "%2f"))
        out.append(path + ";")
        out.append(path + ";x=1")
        out.append(path + "?")
        out.append(path + "?x=1&app=com.contoso.a")
        out.append(path + "%00")
        out.append(path + "%20")
        out.append(path + "/.")
        out.append(path + "\\")
        out.append(path.replacingOccurrences(of: "/", with: "\\"))
        out.append(path + "#frag")
        var seen = Set<String>()
        return out.filter { seen.insert($0).inserted }
    }
}
