import Foundation
import Testing

extension JournaldHarness {
    /// Starts the built daemon inside this harness on a free port with its own data
    /// directory (the caller removes it) and waits until `readyPath` answers 200 (`/healthz`
    /// for a daemon meant to be unready). With `user`, the
    /// daemon runs as that uid (and gid) with exactly the supplementary `groups` given, and
    /// the journal directory is set up the way systemd-tmpfiles sets up `/run/log/journal`
    /// (group `systemd-journal`, setgid), so journal access is decided by group as on a host.
    func launchDaemon(
        _ arguments: [String] = [], user: (uid: UInt32, groups: [UInt32])? = nil, readyPath: String = "/readyz"
    ) async throws -> (DaemonProcess, Process) {
        let d = try DaemonProcess()
        _ = FileManager.default.createFile(atPath: d.logFile.path, contents: nil)
        let log = try FileHandle(forWritingTo: d.logFile)
        var command = [DaemonProcess.binary.path, "--data-dir", d.dataDirectory.path, "--listen", "127.0.0.1:\(d.port)"] + arguments
        if let user {
            let journalGroup = try #require(Self.gid(of: "systemd-journal"), "no systemd-journal group on this host")
            #expect(chown(journalDirectory.path, 0, journalGroup) == 0 && chmod(journalDirectory.path, 0o2755) == 0)
            #expect(chown(d.dataDirectory.path, user.uid, user.uid) == 0 && chown(d.logFile.path, user.uid, user.uid) == 0)
            let groups = user.groups.isEmpty ? "--clear-groups" : "--groups=" + user.groups.map(String.init).joined(separator: ",")
            command = ["/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.uid)", groups, "--"] + command
        }
        let daemon = try launch(command[0], Array(command.dropFirst()), standardOutput: log, standardError: log)
        do {
            try await JournaldMirrorTests.waitUntilReady(d, daemon, path: readyPath)
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
