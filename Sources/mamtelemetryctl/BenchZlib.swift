import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// zlib through `dlopen`, because this executable's target does not link zlib: only the
/// one-shot `compress2` (zlib format = HTTP `deflate`) and `crc32` (to wrap the same
/// deflate stream as gzip) are needed.
struct Zlib: @unchecked Sendable {
    typealias Compress2 =
        @convention(c) (UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt>, UnsafePointer<UInt8>, UInt, Int32) -> Int32
    typealias Bound = @convention(c) (UInt) -> UInt
    typealias CRC32 = @convention(c) (UInt, UnsafePointer<UInt8>, UInt32) -> UInt
    let compress2: Compress2
    let bound: Bound
    let crc: CRC32

    struct Missing: Error, CustomStringConvertible {
        var description: String { "libz.so.1 could not be loaded; install zlib1g or use --encoding identity" }
    }

    static func load() throws -> Zlib {
        guard let h = dlopen("libz.so.1", RTLD_NOW), let c = dlsym(h, "compress2"), let b = dlsym(h, "compressBound"),
            let r = dlsym(h, "crc32")
        else { throw Missing() }
        return Zlib(
            compress2: unsafeBitCast(c, to: Compress2.self), bound: unsafeBitCast(b, to: Bound.self), crc: unsafeBitCast(r, to: CRC32.self))
    }

    /// zlib-wrapped deflate at level 6, what SDKs send as `Content-Encoding: deflate`.
    func compress(_ input: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(bound(UInt(input.count))))
        var len = UInt(out.count)
        let rc = input.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { compress2($0.baseAddress!, &len, src.baseAddress!, UInt(src.count), 6) }
        }
        precondition(rc == 0, "compress2 failed: \(rc)")
        return Array(out.prefix(Int(len)))
    }

    /// The same deflate stream with a gzip header and CRC-32/size trailer instead of zlib's.
    func gzip(_ input: [UInt8]) -> [UInt8] {
        let z = compress(input)
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]
        out.append(contentsOf: z[2..<(z.count - 4)])
        let c = input.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: crc(0, $0.baseAddress!, UInt32($0.count))) }
        let n = UInt32(truncatingIfNeeded: input.count)
        for v in [c, n] { out.append(contentsOf: [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]) }
        return out
    }
}
