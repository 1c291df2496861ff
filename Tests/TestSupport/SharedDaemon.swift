import Testing

/// One daemon process for every test of a suite, for suites whose tests only read what the
/// daemon holds (or send it what no other test of the suite reads back): the daemon starts
/// once before the suite's first test and is stopped, and its data directory removed, after
/// its last. Tests reach it through ``SharedDaemon/daemon()``.
///
/// ```swift
/// @Suite(.serialized, .sharedDaemon(prepare: QueryRecords.store))
/// struct QueryCommandTests {
///     @Test func listsTheRecords() async throws {
///         let d = try SharedDaemon.daemon()
///     }
/// }
/// ```
public struct SharedDaemon: SuiteTrait, TestScoping {
    @TaskLocal static var current: DaemonProcess?

    let arguments: [String]
    let prepare: @Sendable (DaemonProcess) async throws -> Void

    /// Once for the suite, not again for each of its tests.
    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let daemon = try DaemonProcess(extraArguments: arguments)
        defer { daemon.cleanUp() }
        try await daemon.start()
        try await prepare(daemon)
        try await Self.$current.withValue(daemon) { try await function() }
    }

    /// The daemon of the suite the calling test belongs to; fails the test outside such a suite.
    public static func daemon(sourceLocation: SourceLocation = #_sourceLocation) throws -> DaemonProcess {
        try #require(current, "the suite has no .sharedDaemon trait", sourceLocation: sourceLocation)
    }
}

extension Trait where Self == SharedDaemon {
    /// One daemon started with `arguments`, then given to `prepare` (to store what the tests
    /// read), shared by every test of the suite. `prepare` may not name the suite's own type:
    /// the compiler resolves the attribute before the type.
    public static func sharedDaemon(
        arguments: [String] = [], prepare: @escaping @Sendable (DaemonProcess) async throws -> Void = { _ in }
    ) -> Self {
        SharedDaemon(arguments: arguments, prepare: prepare)
    }
}
