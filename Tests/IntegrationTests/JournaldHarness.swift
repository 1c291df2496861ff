import Foundation
import TestSupport
import Testing

/// Runs commands next to a private, real systemd-journald and reads back what they logged
/// (SPEC §11), through `journald-harness.sh` next to this file.
///
/// Each harness owns a work directory; the journal files land in `<workdir>/journal`, so
/// they can be read from outside the harness's mount namespace, during or after the run.
/// The daemon under test runs *inside* the harness (it must see the private
/// `/run/systemd/journal/socket`); journalctl reads from outside with `-D`.
///
/// ```swift
/// let harness = try JournaldHarness()
/// defer { harness.remove() }
/// let daemon = try harness.launch(daemonBinary, ["--listen", "127.0.0.1:0"])
/// ... // drive it over HTTP
/// let lines = try await harness.waitForEntries(["MAM_DEVICE_ID=dev-1"], count: 3)
/// daemon.terminate(); daemon.waitUntilExit()   // SIGTERM is forwarded to the daemon
/// ```
struct JournaldHarness: Sendable {
    /// `journald-harness.sh`, found next to this source file.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("journald-harness.sh")

    /// Whether the harness can run here: it needs root (a private mount namespace),
    /// `unshare`, `systemd-journald` and `journalctl`.
    static var isAvailable: Bool {
        let tools = ["/lib/systemd/systemd-journald", "/usr/bin/unshare", "/usr/bin/journalctl"]
        return getuid() == 0 && tools.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// The output of a command run to completion.
    struct Output: Sendable {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    enum HarnessError: Error, CustomStringConvertible {
        case journalctlFailed(status: Int32, message: String)
        case timedOut(matches: [String], found: Int, wanted: Int)

        var description: String {
            switch self {
            case .journalctlFailed(let status, let message): "journalctl exited \(status): \(message)"
            case .timedOut(let matches, let found, let wanted):
                "only \(found) of \(wanted) journal entries matching \(matches) appeared"
            }
        }
    }

    /// The harness's work directory (journal files, pid files).
    let workdir: URL

    /// Where journald keeps this harness's journal: pass it to `journalctl -D`.
    var journalDirectory: URL { workdir.appendingPathComponent("journal") }

    /// The pid of the command currently (or last) run, for signals the harness does not
    /// forward (SIGKILL in a crash test); `nil` before it started.
    var commandPID: Int32? {
        (try? String(contentsOf: workdir.appendingPathComponent("command.pid"), encoding: .utf8))
            .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    /// - Parameter workdir: where the journal goes; a fresh temporary directory by default.
    init(workdir: URL? = nil) throws {
        self.workdir =
            workdir ?? FileManager.default.temporaryDirectory.appendingPathComponent("journald-harness-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: journalDirectory, withIntermediateDirectories: true)
    }

    /// Deletes the work directory (after the commands have exited).
    func remove() {
        try? FileManager.default.removeItem(at: workdir)
    }

    /// Starts `executable` under the harness and returns at once; the process is the
    /// harness, which forwards SIGTERM/SIGINT/SIGHUP to the command and exits with its
    /// status after stopping journald. `standardOutput`/`standardError` default to the
    /// test's own.
    func launch(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        standardOutput: FileHandle? = nil, standardError: FileHandle? = nil
    ) throws -> ChildProcess {
        try ChildProcess(
            "/bin/bash", [Self.script.path, workdir.path, "--", executable] + arguments,
            environment: environment ?? Self.defaultEnvironment,
            standardOutput: standardOutput?.fileDescriptor, standardError: standardError?.fileDescriptor)
    }

    /// Runs `executable` under the harness to completion and captures its output.
    func run(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil
    ) throws -> Output {
        let output = Pipe()
        let errors = Pipe()
        let process = try launch(
            executable, arguments, environment: environment, standardOutput: output.fileHandleForWriting,
            standardError: errors.fileHandleForWriting)
        try output.fileHandleForWriting.close()
        try errors.fileHandleForWriting.close()
        let (outputData, errorData) = Self.readBoth(output, errors)
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self))
    }

    /// The journal's entries matching every `FIELD=VALUE` in `matches` (journalctl's match
    /// syntax; `+` for OR), oldest first, each field as text. Binary values, which
    /// journalctl prints as byte arrays, are decoded as UTF-8.
    func entries(_ matches: [String] = []) throws -> [[String: String]] {
        let output = try Self.journalctl(["-D", journalDirectory.path, "-o", "json", "--no-pager"] + matches)
        // journalctl exits 1 when the directory has no journal file yet.
        if output.status != 0 {
            if output.standardError.contains("No journal files were found") { return [] }
            throw HarnessError.journalctlFailed(status: output.status, message: output.standardError)
        }
        return try output.standardOutput.split(separator: "\n").map(Self.decodeEntry)
    }

    /// Polls the journal until at least `count` entries match (journald writes
    /// asynchronously), for reading while the command still runs.
    func waitForEntries(
        _ matches: [String], count: Int = 1, timeout: Duration = .seconds(10)
    ) async throws -> [[String: String]] {
        let deadline = ContinuousClock.now + timeout
        var found: [[String: String]] = []
        while ContinuousClock.now < deadline {
            found = try entries(matches)
            if found.count >= count { return found }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw HarnessError.timedOut(matches: matches, found: found.count, wanted: count)
    }

    // MARK: - Helpers

    static let defaultEnvironment: [String: String] = {
        var environment = ProcessInfo.processInfo.environment
        // The command must not talk to a service manager the test runner may be under.
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID"] {
            environment.removeValue(forKey: name)
        }
        return environment
    }()

    static func journalctl(_ arguments: [String]) throws -> Output {
        try capture("/usr/bin/journalctl", arguments, environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "SYSTEMD_PAGER": ""])
    }

    /// Runs `executable` to completion with no input and captures its output; after `timeout`
    /// (if given) it is sent SIGTERM, so a hung tool fails its test rather than the suite.
    static func capture(
        _ executable: String, _ arguments: [String], environment: [String: String], timeout: TimeInterval? = nil
    ) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let watchdog = DispatchWorkItem { if process.isRunning { process.terminate() } }
        if let timeout { DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: watchdog) }
        let (outputData, errorData) = readBoth(output, errors)
        while process.isRunning { usleep(10_000) }
        watchdog.cancel()
        return Output(
            status: process.terminationStatus, standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self))
    }

    /// Reads two pipes to their end concurrently, so neither can fill up and stall the child.
    static func readBoth(_ first: Pipe, _ second: Pipe) -> (Data, Data) {
        let secondData = LockedData()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            secondData.set(second.fileHandleForReading.readDataToEndOfFile())
            done.signal()
        }
        let firstData = first.fileHandleForReading.readDataToEndOfFile()
        done.wait()
        return (firstData, secondData.get())
    }

    static func decodeEntry(_ line: Substring) throws -> [String: String] {
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        return object.compactMapValues { value in
            if let text = value as? String { return text }
            if let bytes = value as? [Int] { return String(decoding: bytes.map { UInt8(truncatingIfNeeded: $0) }, as: UTF8.self) }
            // A field that occurs more than once: journalctl prints an array of values.
            if let values = value as? [Any] {
                return values.map { ($0 as? String) ?? "\($0)" }.joined(separator: "\n")
            }
            return nil
        }
    }

    /// A `Data` box shared with the reading thread.
    private final class LockedData: @unchecked Sendable {
        private let lock = NSLock()
        private var data = Data()
        func set(_ value: Data) { lock.withLock { data = value } }
        func get() -> Data { lock.withLock { data } }
    }
}

// MARK: The daemon under the harness

extension JournaldHarness {
    /// Starts the built daemon inside this harness on a port it chooses, with its own data
    /// directory (the caller removes it) and waits until `readyPath` answers 200 (`/healthz`
    /// for a daemon meant to be unready). With `user`, the
    /// daemon runs as that uid (and gid) with exactly the supplementary `groups` given, and
    /// the journal directory is set up the way systemd-tmpfiles sets up `/run/log/journal`
    /// (group `systemd-journal`, setgid), so journal access is decided by group as on a host.
    func launchDaemon(
        _ arguments: [String] = [], user: (uid: UInt32, groups: [UInt32])? = nil, readyPath: String = "/readyz"
    ) async throws -> (DaemonProcess, ChildProcess) {
        let d = try DaemonProcess(extraArguments: arguments)
        let log = try d.openLog()
        defer { try? log.close() }
        var command = d.commandLine
        if let user {
            let journalGroup = try #require(Self.gid(of: "systemd-journal"), "no systemd-journal group on this host")
            #expect(chown(journalDirectory.path, 0, journalGroup) == 0 && chmod(journalDirectory.path, 0o2755) == 0)
            #expect(chown(d.dataDirectory.path, user.uid, user.uid) == 0 && chown(d.logFile.path, user.uid, user.uid) == 0)
            let groups = user.groups.isEmpty ? "--clear-groups" : "--groups=" + user.groups.map(String.init).joined(separator: ",")
            command = ["/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.uid)", groups, "--"] + command
        }
        // The harness passes NOTIFY_SOCKET on to the daemon (only journald is kept from
        // it), so the daemon's READY=1 tells the test which port it bound.
        let seen = d.notify.messages.count
        let daemon = try launch(
            command[0], Array(command.dropFirst()), environment: d.daemonEnvironment(), standardOutput: log, standardError: log)
        do {
            try await d.waitUntilReady(after: seen, path: readyPath, alive: { daemon.isRunning })
        } catch {
            stop(daemon)
            throw error
        }
        return (d, daemon)
    }

    static func gid(of group: String) -> UInt32? {
        guard let entry = getgrnam(group) else { return nil }
        return entry.pointee.gr_gid
    }

    static func waitForExit(_ process: ChildProcess, timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        return !process.isRunning
    }

    /// SIGTERM to the daemon itself rather than to the harness, so the test does not depend
    /// on the harness's forwarding trap (which Foundation's `Process` defeated: it started
    /// bash with SIGTERM blocked; `ChildProcess` clears the mask, and the harness is the
    /// fallback when the command's pid is not known yet).
    func terminate(_ process: ChildProcess) {
        if let pid = commandPID, pid > 0 {
            kill(pid, SIGTERM)
        } else {
            process.terminate()
        }
    }

    /// Stops the harness (and so the daemon and journald) if a failed check left it running.
    func stop(_ process: ChildProcess) {
        guard process.isRunning else { return }
        terminate(process)
        if !Self.waitForExit(process, timeout: 15) {
            if let pid = commandPID { kill(pid, SIGKILL) }
            kill(process.processIdentifier, SIGKILL)  // journald gets SIGTERM (pdeathsig)
            _ = Self.waitForExit(process, timeout: 5)
        }
    }
}

// MARK: The shipped catalog

extension JournaldHarness {
    static let catalog = DaemonProcess.packageRoot.appendingPathComponent("systemd/mamtelemetryd.catalog")

    /// A temporary root whose `var/lib/systemd/catalog/database` journalctl built from the
    /// shipped catalog; the caller deletes it.
    static func buildCatalogDatabase() throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("mamtelemetryd-catalog-\(UUID().uuidString)")
        let catalogDirectory = root.appendingPathComponent("usr/lib/systemd/catalog")
        try FileManager.default.createDirectory(at: catalogDirectory, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: catalog, to: catalogDirectory.appendingPathComponent("mamtelemetryd.catalog"))
        let update = try journalctl(["--root=\(root.path)", "--update-catalog"])
        #expect(update.status == 0, "\(update.standardError)")
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("var/lib/systemd/catalog/database").path))
        return root
    }

    /// The `Subject:` line the shipped catalog gives `id`.
    static func catalogSubject(of id: String) throws -> String {
        let text = try String(contentsOf: catalog, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "-- \(id)\n").dropFirst().first, "no catalog entry \(id)")
        return try #require(section.split(separator: "\n").first { $0.hasPrefix("Subject: ") }.map(String.init))
    }

    /// `journalctl -D <journal> -x <match>` with `database` (or none) as the catalog, in a
    /// private mount namespace (JournaldMirrorTests.catalogExplainsStarted says why).
    func explain(database: URL?, match: String) throws -> Output {
        let script = """
            set -e
            mount -t tmpfs -o mode=0755 tmpfs /var/lib/systemd
            mkdir -p /var/lib/systemd/catalog
            if [ -n "$1" ]; then cp "$1" /var/lib/systemd/catalog/database; fi
            exec journalctl -D "$2" -x --no-pager \(match)
            """
        return try Self.capture(
            "/usr/bin/unshare",
            ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", database?.path ?? "", journalDirectory.path],
            environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "SYSTEMD_PAGER": ""])
    }
}
