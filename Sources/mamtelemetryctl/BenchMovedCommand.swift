import ArgumentParser
import Foundation

/// `mamtelemetryctl bench` is no longer the load generator: it names the tool that is, so a
/// remembered command line fails with the fix rather than an "unexpected argument".
struct BenchMovedCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Moved: the load generator is mamtelemetry-bench.", shouldDisplay: false)

    @Argument(parsing: .captureForPassthrough) var arguments: [String] = []

    func run() throws {
        FileHandle.standardError.write(
            Data("mamtelemetryctl bench moved: run mamtelemetry-bench [options] (same options, same output)\n".utf8))
        throw ExitCode(64)
    }
}
