import Foundation
import StoreCore

/// A batch payload inflated once, with its line boundaries found by one `memchr` walk, so a
/// record is a range of the shared buffer rather than an array of its own.
struct BatchLines {
    let payload: [UInt8]
    /// Start offset of each line, plus one past the end of the last.
    private let starts: [Int]

    /// Throws ``StoreError/corruptBlock(_:)`` when the payload does not hold exactly
    /// `expected` lines (one per entry of the keys block): a record must never be shown
    /// with another record's keys.
    init(payload: [UInt8], expected: Int, firstSeq: Int64) throws {
        var starts: [Int] = [0]
        starts.reserveCapacity(expected + 1)
        payload.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            let n = raw.count
            while offset < n, let hit = memchr(base + offset, 0x0A, n - offset) {
                let at = base.distance(to: UnsafeRawPointer(hit))
                starts.append(at + 1)
                offset = at + 1
            }
        }
        starts.append(payload.count + 1)
        guard starts.count - 1 == expected else {
            throw StoreError.corruptBlock("batch at seq \(firstSeq) has \(starts.count - 1) lines for \(expected) keys")
        }
        self.payload = payload
        self.starts = starts
    }

    /// The bytes of line `i` (without its newline), sharing the payload's storage.
    func slice(_ i: Int) -> ArraySlice<UInt8> { payload[starts[i]..<(starts[i + 1] - 1)] }

    /// The bytes of line `i` (without its newline), for the duration of `body`.
    func withLine<R>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try payload.withUnsafeBufferPointer { b in
            try body(UnsafeBufferPointer(rebasing: b[starts[i]..<(starts[i + 1] - 1)]))
        }
    }
}
