/// Where archive bytes go as they are produced: the HTTP response body, a file, a hasher in
/// tests. `write` is awaited before the builder produces more, which is the back-pressure
/// that keeps a bundle of any size from piling up in memory.
public protocol BundleSink {
    mutating func write(_ bytes: [UInt8]) async throws
}
