import Foundation
import Testing

@testable import ProcessMemory

#if canImport(Glibc)
    import Glibc
#endif

/// `ColdPages`: read-only file mappings leave the RSS; nothing else is touched.
struct ColdPagesTests {
    /// The resident KiB of the mapping that starts at `start`, from `/proc/self/smaps`.
    static func residentKiB(at start: UInt) throws -> Int? {
        let smaps = String(
            decoding: try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/smaps")).readToEnd() ?? Data(), as: UTF8.self)
        var inside = false
        for line in smaps.split(separator: "\n") {
            if let m = ColdPages.Mapping(line), line.first?.isHexDigit == true {
                inside = m.start == start
            } else if inside, line.hasPrefix("Rss:") {
                return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1])
            }
        }
        return nil
    }

    @Test func readOnlyFileMappingLeavesTheRSSAndAWritableOneDoesNot() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cold-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let size = 4 << 20
        let path = dir.appendingPathComponent("code.bin").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })))
        let fd = open(path, O_RDONLY)
        #expect(fd >= 0)
        defer { close(fd) }
        fsync(fd)  // clean pages, as an executable's are
        let readOnly = try #require(mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0))
        defer { munmap(readOnly, size) }
        // Anonymous memory standing in for the heap: must keep its contents and residency.
        let heap = try #require(mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
        defer { munmap(heap, size) }
        var sum = 0
        for offset in stride(from: 0, to: size, by: 4096) {
            sum &+= Int(readOnly.load(fromByteOffset: offset, as: UInt8.self))
            heap.storeBytes(of: UInt8(offset >> 12 & 0xFF), toByteOffset: offset, as: UInt8.self)
        }
        let roStart = UInt(bitPattern: readOnly)
        let heapStart = UInt(bitPattern: heap)
        #expect(try Self.residentKiB(at: roStart) == size >> 10)

        // A maps file longer than a page, with the mapping on its last line: the whole file is read.
        var maps = (0..<200).map { i in "7f00\(String(format: "%08x", i))000-7f00\(String(format: "%08x", i))fff rw-p 00000000 00:00 0 \n" }
            .joined()
        maps += String(format: "%lx-%lx rw-p 00000000 00:00 0 \n", heapStart, heapStart + UInt(size))
        maps += String(format: "%lx-%lx r--p 00000000 08:01 1234                       %@\n", roStart, roStart + UInt(size), path)
        let mapsPath = dir.appendingPathComponent("maps").path
        #expect(FileManager.default.createFile(atPath: mapsPath, contents: Data(maps.utf8)))
        #expect(maps.utf8.count > 8192)
        #expect(ColdPages.release(mapsPath: mapsPath) == size, "only the read-only file mapping is advised")

        #expect(try Self.residentKiB(at: roStart) ?? 0 < size >> 12, "most of the file's pages left the RSS")
        #expect(try Self.residentKiB(at: heapStart) == size >> 10, "anonymous memory stays resident")
        for offset in stride(from: 0, to: size, by: 4096) {
            #expect(heap.load(fromByteOffset: offset, as: UInt8.self) == UInt8(offset >> 12 & 0xFF))
        }
        // A page read again comes back from the file, unchanged.
        var again = 0
        for offset in stride(from: 0, to: size, by: 4096) { again &+= Int(readOnly.load(fromByteOffset: offset, as: UInt8.self)) }
        #expect(again == sum)
    }

    @Test func mapsLinesParse() throws {
        let code = try #require(ColdPages.Mapping("55d0c8a00000-55d0c8b23000 r-xp 00001000 08:01 917 /usr/lib/my lib.so"[...]))
        #expect(code.start == 0x55d0_c8a0_0000 && code.length == 0x123000 && code.path == "/usr/lib/my lib.so" && code.readOnlyFile)
        #expect(ColdPages.Mapping("7ffd1000-7ffd2000 rw-p 00000000 00:00 0    [stack]"[...])?.readOnlyFile == false)
        #expect(ColdPages.Mapping("7ffd1000-7ffd2000 r--p 00000000 00:00 0    [vvar]"[...])?.readOnlyFile == false)
        #expect(ColdPages.Mapping("7ffd1000-7ffd2000 rw-p 00000000 08:01 12   /var/lib/x.sqlite-shm"[...])?.readOnlyFile == false)
        #expect(ColdPages.Mapping("7ffd1000-7ffd2000 r--p 00000000 00:00 0 "[...])?.readOnlyFile == false)
        #expect(ColdPages.Mapping("garbage"[...]) == nil)
        #expect(ColdPages.Mapping("2000-1000 r--p 0 0 0 /x"[...]) == nil)
    }
}
