import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The listening socket systemd handed over (`mamtelemetryd.socket`, or
/// `systemd-socket-activate`), checked before the daemon serves on it.
///
/// With socket activation systemd owns the address: it binds while the daemon is not yet
/// (or no longer) running and queues connections in the kernel backlog, so a restart
/// refuses nobody. The daemon must then serve on that very descriptor and must not bind
/// `--listen` too — a second listener would split clients between two sockets.
public struct InheritedListener: Sendable, CustomStringConvertible {
    /// The descriptor, numbered from `SD_LISTEN_FDS_START` (3).
    public let descriptor: Int32
    /// The bound address as the kernel reports it, e.g. `127.0.0.1:8470`.
    public let address: String

    public var description: String { "fd \(descriptor) (\(address))" }
}

/// Socket activation as the daemon sees it: zero or one inherited HTTP listener.
public enum SocketActivation {
    /// Why the inherited descriptors cannot be served on. Starting anyway (binding
    /// `--listen` instead) would leave the socket unit's address dead while systemd keeps
    /// queueing clients on it, so the daemon refuses to start.
    public enum Refusal: Error, CustomStringConvertible {
        case notAListeningStreamSocket(descriptor: Int32)

        public var description: String {
            switch self {
            case .notAListeningStreamSocket(let fd):
                "socket activation: inherited fd \(fd) is not a listening stream socket (the .socket unit needs ListenStream=, Accept=no)"
            }
        }
    }

    /// The listener to serve on, or `nil` when the daemon was not socket-activated
    /// (`LISTEN_FDS`/`LISTEN_PID` unset or meant for another process).
    ///
    /// Reads the environment through `sd_listen_fds`, which also removes it, so call this
    /// once, early. The first descriptor is served on; the `.socket` unit ships one
    /// `ListenStream=`, and further ones are reported by the caller, not silently adopted.
    public static func inheritedListener() throws -> (listener: InheritedListener, ignored: [Int32])? {
        try listener(from: ListenFDs.inherited())
    }

    /// Checks `descriptors` (the `sd_listen_fds` result) and picks the first one.
    static func listener(from descriptors: [Int32]) throws -> (listener: InheritedListener, ignored: [Int32])? {
        guard let first = descriptors.first else { return nil }
        guard isListeningStreamSocket(first) else { throw Refusal.notAListeningStreamSocket(descriptor: first) }
        return (InheritedListener(descriptor: first, address: boundAddress(first)), Array(descriptors.dropFirst()))
    }

    /// `SOCK_STREAM` and `SO_ACCEPTCONN`: what `sd_is_socket(fd, AF_UNSPEC, SOCK_STREAM, 1)`
    /// checks, done with plain `getsockopt` so this target needs no libsystemd import.
    static func isListeningStreamSocket(_ fd: Int32) -> Bool {
        func option(_ name: Int32) -> Int32? {
            var value: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            return getsockopt(fd, SOL_SOCKET, name, &value, &length) == 0 ? value : nil
        }
        return option(SO_TYPE) == Int32(SOCK_STREAM.rawValue) && option(SO_ACCEPTCONN) == 1
    }

    /// `host:port` (IPv4/IPv6) or the path of a unix socket, for logs and the status line.
    static func boundAddress(_ fd: Int32) -> String {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) == 0 }
        }
        guard ok else { return "?" }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafeBytes(of: &storage) { raw in
                let a = raw.load(as: sockaddr_in.self)
                let host = withUnsafeBytes(of: a.sin_addr) { numericHost($0, family: AF_INET) }
                return "\(host):\(UInt16(bigEndian: a.sin_port))"
            }
        case AF_INET6:
            return withUnsafeBytes(of: &storage) { raw in
                let a = raw.load(as: sockaddr_in6.self)
                let host = withUnsafeBytes(of: a.sin6_addr) { numericHost($0, family: AF_INET6) }
                return "[\(host)]:\(UInt16(bigEndian: a.sin6_port))"
            }
        case AF_UNIX:
            return withUnsafeBytes(of: &storage) { raw in
                let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
                let bytes = raw[pathOffset..<Int(length)].prefix { $0 != 0 }
                return "unix:" + String(decoding: bytes, as: UTF8.self)
            }
        default:
            return "family \(storage.ss_family)"
        }
    }

    private static func numericHost(_ address: UnsafeRawBufferPointer, family: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(family, address.baseAddress, &buffer, socklen_t(buffer.count)) != nil else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
