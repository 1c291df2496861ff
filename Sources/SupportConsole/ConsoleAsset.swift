import Crypto
import Foundation

/// One file of the browser support console as the daemon serves it: its bytes, the media
/// type the browser needs to run it (modules load only as JavaScript), and a strong ETag so
/// a revisit costs a 304 rather than the whole console.
public struct ConsoleAsset: Sendable {
    public let name: String
    public let bytes: [UInt8]
    public let contentType: String
    public let etag: String

    init(name: String, text: String) {
        self.name = name
        bytes = Array(text.utf8)
        contentType = Self.contentType(forName: name)
        etag = "\"" + SHA256.hash(data: bytes).prefix(12).map { String(format: "%02x", $0) }.joined() + "\""
    }

    static func contentType(forName name: String) -> String {
        switch name.split(separator: ".").last.map({ $0.lowercased() }) {
        case "html": "text/html; charset=utf-8"
        case "js", "mjs": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "json": "application/json"
        default: "text/plain; charset=utf-8"
        }
    }
}

/// The console's files, embedded in the binary at build time (the `EmbedConsoleAssets`
/// plugin), so an installed daemon serves them with nothing beside it and no network.
public struct ConsoleAssetCatalog: Sendable {
    public let assets: [String: ConsoleAsset]

    /// The page the console starts from.
    public static let indexName = "index.html"

    public init() {
        var assets: [String: ConsoleAsset] = [:]
        for (name, text) in EmbeddedConsoleAssets.files { assets[name] = ConsoleAsset(name: name, text: text) }
        self.assets = assets
    }

    public subscript(name: String) -> ConsoleAsset? { assets[name] }

    public var index: ConsoleAsset? { assets[Self.indexName] }
}
