import Foundation
import TestSupport
import Testing

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
            JournaldMirrorTests.stop(daemon, self)
            throw error
        }
        return (d, daemon)
    }

    static func gid(of group: String) -> UInt32? {
        guard let entry = getgrnam(group) else { return nil }
        return entry.pointee.gr_gid
    }
}
