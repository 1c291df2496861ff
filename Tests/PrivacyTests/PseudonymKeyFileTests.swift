import Foundation
import Privacy
import Testing

/// `pseudonym.key` is created once, durably and privately, and a damaged one is refused —
/// never silently replaced, which would change every pseudonym and journal identity hash.
struct PseudonymKeyFileTests {
    static func directory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pkey-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func aNewKeyIsPrivateWholeAndStable() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("state/pseudonym.key")
        let first = try PseudonymKeyFile.load(from: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect((attributes[.size] as? NSNumber)?.intValue == 32)
        // No temporary file is left beside it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: path.deletingLastPathComponent().path) == ["pseudonym.key"])
        let again = try PseudonymKeyFile.load(from: path)
        #expect(first.identityPseudonym("Jane@Contoso.com") == again.identityPseudonym("jane@contoso.com"))
    }

    @Test(arguments: [0, 5, 31, 33, 64])
    func aKeyOfTheWrongLengthIsRefusedAndLeftAlone(length: Int) throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("pseudonym.key")
        let damaged = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try damaged.write(to: path)
        #expect(throws: PseudonymKeyError.wrongLength(path: path.path, bytes: length)) { try PseudonymKeyFile.load(from: path) }
        #expect(try Data(contentsOf: path) == damaged, "the damaged key must not be replaced")
        #expect(PseudonymKeyError.wrongLength(path: path.path, bytes: length).exitCode == 65)
    }

    @Test func anUnreadableKeyIsRefused() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("pseudonym.key")
        try FileManager.default.createDirectory(at: path, withIntermediateDirectories: false)
        #expect(throws: PseudonymKeyError.unreadable(path: path.path, reason: "not a regular file")) {
            try PseudonymKeyFile.load(from: path)
        }
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: path.path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }
}
