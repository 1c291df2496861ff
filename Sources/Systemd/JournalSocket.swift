import Glibc

/// The journald native-protocol socket, and how to tell whether a journal is listening.
///
/// Outside systemd (a container, a developer's shell) there is no socket; under a stopped
/// or crashed journald the socket file can remain with nobody reading it. Both cases must
/// be recognised so the daemon says once that the journal is unavailable, falls back to
/// stderr for its own log, and keeps taking data.
public enum JournalSocket {
    /// Where libsystemd sends native-protocol datagrams (fixed in libsystemd).
    public static let path = "/run/systemd/journal/socket"

    /// Whether a journald is listening on ``path`` right now: a datagram socket can be
    /// connected to it. A socket file with no reader refuses the connection.
    public static func isReachable(path: String = JournalSocket.path) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
            raw[pathBytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }

    /// Whether a send error means "no journal here" (as opposed to a problem with one
    /// entry): the socket is absent, or nothing listens on it.
    public static func isUnavailableError(_ code: Int32) -> Bool {
        let errno = -code
        return errno == ENOENT || errno == ECONNREFUSED || errno == ENOTCONN || errno == ENOTDIR
    }

    /// `"No such file or directory (ENOENT)"`-style text for a negative errno, for logs
    /// and `/readyz`.
    public static func describe(_ code: Int32) -> String {
        let errno = code < 0 ? -code : code
        let text = String(cString: strerror(errno))
        let symbol = symbolicNames[errno].map { " (\($0))" } ?? " (errno \(errno))"
        return text + symbol
    }

    private static let symbolicNames: [Int32: String] = [
        ENOENT: "ENOENT", ECONNREFUSED: "ECONNREFUSED", ENOTCONN: "ENOTCONN",
        ENOTDIR: "ENOTDIR", EAGAIN: "EAGAIN", ENOBUFS: "ENOBUFS", EMSGSIZE: "EMSGSIZE",
        EINVAL: "EINVAL", EPERM: "EPERM", EACCES: "EACCES", ENOMEM: "ENOMEM", EPIPE: "EPIPE",
    ]
}
