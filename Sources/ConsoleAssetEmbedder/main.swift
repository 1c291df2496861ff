import Foundation

/// Build-time tool of the `EmbedConsoleAssets` plugin: writes one Swift file holding every
/// console asset as a raw string literal, keyed by file name.
///
///     ConsoleAssetEmbedder <output.swift> <asset>...
///
/// Assets must be UTF-8 text with LF line ends (HTML, CSS, JavaScript, SVG): a literal keeps
/// their exact bytes, which the daemon's ETags and the browser tests rely on.
let arguments = CommandLine.arguments.dropFirst()
guard let output = arguments.first else {
    FileHandle.standardError.write(Data("usage: ConsoleAssetEmbedder <output.swift> <asset>...\n".utf8))
    exit(64)
}
var swift = "// Generated at build time by ConsoleAssetEmbedder from Sources/SupportConsole/Assets.\n"
swift += "enum EmbeddedConsoleAssets {\n    static let files: [String: String] = [\n"
for path in arguments.dropFirst() {
    let url = URL(fileURLWithPath: path)
    guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
        FileHandle.standardError.write(Data("error: \(path): console assets must be UTF-8 text\n".utf8))
        exit(65)
    }
    guard !text.contains("\r") else {
        FileHandle.standardError.write(Data("error: \(path): use LF line ends (a Swift literal would turn CR LF into LF)\n".utf8))
        exit(65)
    }
    // A raw-string delimiter the file cannot close early.
    var hashes = "#"
    while text.contains("\"\"\"" + hashes) || text.contains("\\" + hashes) { hashes += "#" }
    // The newline before the closing delimiter is not part of a multi-line literal: the
    // added one keeps a file's own final newline (or its absence).
    swift += "        \(String(reflecting: url.lastPathComponent)): \(hashes)\"\"\"\n\(text)\n\"\"\"\(hashes),\n"
}
swift += "    ]\n}\n"
do {
    try swift.write(toFile: output, atomically: true, encoding: .utf8)
} catch {
    FileHandle.standardError.write(Data("error: cannot write \(output): \(error)\n".utf8))
    exit(73)
}
