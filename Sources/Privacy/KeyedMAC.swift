import Crypto

/// HMAC-SHA256 (RFC 2104) with the key's inner and outer pads hashed once, when the key is
/// loaded: each message then costs its own blocks and the outer block, not two more for the
/// pads. swift-crypto's `HMAC(key:)` pads and hashes the key again per message (a third of a
/// non-`pii` read's CPU on a fleet's worth of users), and its `update(data:)` goes through
/// generic `DataProtocol` regions; this hashes contiguous bytes directly. Checked against
/// swift-crypto's `HMAC` and Python's `hmac` in `PseudonymizerTests`.
///
/// Unchecked `Sendable`: swift-crypto does not mark `SHA256` `Sendable`; it is a value whose
/// state is copy-on-write (copied before an update when shared), and the two kept here are
/// never updated: each message updates and finalizes copies of them.
struct KeyedMAC: @unchecked Sendable {
    private let inner: SHA256
    private let outer: SHA256

    init(key: SymmetricKey) {
        // The key as one block: hashed first when longer than a block, zero-padded.
        var block = [UInt8](repeating: 0, count: SHA256.blockByteCount)
        key.withUnsafeBytes { bytes in
            if bytes.count > block.count {
                SHA256.hash(data: bytes).withUnsafeBytes { block.replaceSubrange(0..<$0.count, with: $0) }
            } else {
                block.replaceSubrange(0..<bytes.count, with: bytes)
            }
        }
        var inner = SHA256()
        var outer = SHA256()
        block.map { $0 ^ 0x36 }.withUnsafeBytes { inner.update(bufferPointer: $0) }
        block.map { $0 ^ 0x5C }.withUnsafeBytes { outer.update(bufferPointer: $0) }
        self.inner = inner
        self.outer = outer
    }

    /// HMAC-SHA256 of `message` under the key.
    func code(_ message: UnsafeRawBufferPointer) -> SHA256.Digest {
        var inner = inner
        inner.update(bufferPointer: message)
        var outer = outer
        inner.finalize().withUnsafeBytes { outer.update(bufferPointer: $0) }
        return outer.finalize()
    }
}
