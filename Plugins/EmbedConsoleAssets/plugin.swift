import Foundation
import PackagePlugin

/// Embeds the support console's web assets (`Sources/SupportConsole/Assets/`) into the
/// daemon as Swift string literals, generated at build time. SwiftPM's own `.embedInCode`
/// resources emit byte-array literals that took ~35 s of debug compile per 100 KB on the
/// build machines; string literals compile in about a second and need no copy in git.
@main struct EmbedConsoleAssets: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let assets = target.directoryURL.appendingPathComponent("Assets")
        let names = try FileManager.default.contentsOfDirectory(atPath: assets.path)
            .filter { !$0.hasPrefix(".") }
            .sorted()
        let inputs = names.map { assets.appendingPathComponent($0) }
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("EmbeddedConsoleAssets.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(inputs.count) support console assets",
                executable: try context.tool(named: "ConsoleAssetEmbedder").url,
                arguments: [output.path] + inputs.map(\.path),
                inputFiles: inputs,
                outputFiles: [output])
        ]
    }
}
