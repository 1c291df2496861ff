import CSystemd

/// Listening sockets passed by systemd socket activation (`mamtelemetryd.socket`).
///
/// With socket activation systemd binds the port, queues connections while the daemon
/// starts or restarts, and hands the socket over; the daemon adopts it instead of binding
/// its own.
public enum ListenFDs {
    /// The inherited descriptors, numbered from `SD_LISTEN_FDS_START` (3); empty when the
    /// daemon was not socket-activated. `LISTEN_FDS`/`LISTEN_PID`/`LISTEN_FDNAMES` are
    /// removed from the environment so children do not adopt them too, which also means
    /// only the first call returns them. Each is marked close-on-exec.
    public static func inherited() -> [Int32] {
        let count = sd_listen_fds(1)
        guard count > 0 else { return [] }
        return (0..<count).map { Int32(SD_LISTEN_FDS_START) + $0 }
    }
}
