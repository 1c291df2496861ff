import Foundation
import TestSupport
import Testing

/// The shipped systemd units and their installation, checked with the real systemd
/// tools: `systemd-analyze verify` for correctness, `systemd-analyze security` for the
/// hardening promise (spec §7), and `make install-*` into a scratch root for the file
/// layout packagers rely on. Nothing here starts a unit or boots systemd.
@Suite("systemd units and packaging")
struct SystemdUnitTests {
    /// `verify` exits 0 even for unknown keys or misspelt settings, so a clean run means
    /// exit 0 *and* nothing printed. It also checks that ExecStart= points at an
    /// executable, so each copy names the freshly built daemon instead of /usr/bin.
    @Test("every unit in systemd/ passes systemd-analyze verify without a warning")
    func unitFilesVerifyCleanly() throws {
        let analyze = try SystemdTools.requireAnalyze()
        let units = try UnitFiles.all()
        #expect(
            Set(units.map(\.lastPathComponent)).isSuperset(
                of: ["mamtelemetryd.service", "mamtelemetryd.socket"]))

        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let binaries = try BuiltProducts.requireDirectory()
        for unit in units {
            let original = try String(contentsOf: unit, encoding: .utf8)
            var pointed = original
            for program in ["mamtelemetryd", "mamtelemetryctl"] {
                pointed = pointed.replacingOccurrences(
                    of: "/usr/bin/\(program)", with: binaries.appendingPathComponent(program).path)
            }
            if unit.pathExtension == "service" {
                #expect(
                    original.contains("ExecStart=/usr/bin/mamtelemetryd"),
                    "\(unit.lastPathComponent): ExecStart no longer names /usr/bin/mamtelemetryd; update this test")
            }
            // All units share one directory: the socket's Service= must resolve.
            try pointed.write(
                to: scratch.file(unit.lastPathComponent), atomically: true, encoding: .utf8)
        }
        for unit in units {
            let result = try Command.run(analyze, ["verify", scratch.file(unit.lastPathComponent).path])
            #expect(result.status == 0, "verify \(unit.lastPathComponent) exited \(result.status):\n\(result.output)")
            #expect(result.output.isEmpty, "verify \(unit.lastPathComponent) printed:\n\(result.output)")
        }
    }

    /// Guards the test above: if verify stopped reporting unknown keys on stderr, an
    /// empty output would prove nothing.
    @Test("systemd-analyze verify reports a misspelt setting")
    func verifyReportsMisspeltSetting() throws {
        let analyze = try SystemdTools.requireAnalyze()
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let unit = scratch.url.appendingPathComponent("misspelt-probe.service")
        try "[Unit]\nDescription=probe\n[Service]\nExecStart=/bin/true\nProtectSystm=strict\n"
            .write(to: unit, atomically: true, encoding: .utf8)
        let result = try Command.run(analyze, ["verify", unit.path])
        #expect(result.stderr.contains("Unknown key 'ProtectSystm'"), "verify printed:\n\(result.output)")
    }

    /// Spec §7 asks for measured hardening; the bar is "OK" or better (≤ 4.9). The figure
    /// written in the unit header and in systemd/README.md must be the one measured,
    /// so a change to the hardening cannot leave the documentation behind.
    @Test("service exposure is OK or better and matches the documented figure")
    func serviceExposureIsOKAndDocumented() throws {
        let analyze = try SystemdTools.requireAnalyze()
        let service = UnitFiles.directory.appendingPathComponent("mamtelemetryd.service")
        let result = try Command.run(analyze, ["security", "--offline=true", service.path])
        #expect(result.status == 0, "security exited \(result.status):\n\(result.output)")

        let measured = try #require(
            result.stdout.firstMatch(of: /Overall exposure level for mamtelemetryd\.service: (\d+\.\d+) (\w+)/),
            "no 'Overall exposure level' line in:\n\(result.output)")
        let exposure = try #require(Double(measured.1))
        #expect(exposure <= 4.9, "exposure \(exposure) \(measured.2) is worse than OK:\n\(result.stdout)")

        let unitText = try String(contentsOf: service, encoding: .utf8)
        let inUnit = try #require(
            unitText.firstMatch(of: /rates this unit (\d+\.\d+) (\w+)/),
            "mamtelemetryd.service no longer records its exposure")
        #expect(
            inUnit.1 == measured.1 && inUnit.2 == measured.2,
            "unit header says \(inUnit.1) \(inUnit.2), measured \(measured.1) \(measured.2)")

        let readme = try String(contentsOf: UnitFiles.directory.appendingPathComponent("README.md"), encoding: .utf8)
        let inReadme = try #require(
            readme.firstMatch(of: /rates the unit \*\*(\d+\.\d+) (\w+)\*\*/),
            "systemd/README.md no longer records the exposure")
        #expect(
            inReadme.1 == measured.1 && inReadme.2 == measured.2,
            "README says \(inReadme.1) \(inReadme.2), measured \(measured.1) \(measured.2)")
    }

    /// `make install-data` needs no release build, so the whole non-binary layout is
    /// checked on every run, at the FHS paths a package puts it.
    @Test("make install-data puts units, catalog, config and docs at FHS paths")
    func installDataUsesFHSPaths() throws {
        let make = try SystemdTools.require("make")
        let root = try ScratchDirectory()
        defer { root.remove() }
        let result = try Command.run(make, ["-C", PackageRoot.url.path, "install-data", "DESTDIR=\(root.url.path)"])
        try #require(result.status == 0, "make install-data failed:\n\(result.output)")

        for unit in ["mamtelemetryd.service", "mamtelemetryd.socket"] {
            let installed = root.file("usr/lib/systemd/system/\(unit)")
            try expectFile(installed, mode: 0o644)
            // With the default prefix the shipped text is installed unchanged.
            let shipped = UnitFiles.directory.appendingPathComponent(unit)
            #expect(try Data(contentsOf: installed) == Data(contentsOf: shipped))
        }
        try expectFile(root.file("usr/share/doc/mamtelemetryd/README.systemd.md"), mode: 0o644)
        for page in ["mamtelemetryd.1", "mamtelemetryctl.1"] {
            try expectFile(root.file("usr/share/man/man1/\(page)"), mode: 0o644)
        }

        let catalog = PackageRoot.url.appendingPathComponent("systemd/mamtelemetryd.catalog")
        if FileManager.default.fileExists(atPath: catalog.path) {
            try expectFile(root.file("usr/lib/systemd/catalog/mamtelemetryd.catalog"), mode: 0o644)
        } else {
            #expect(result.stderr.contains("mamtelemetryd.catalog missing"), "a missing catalog must be reported")
        }
        let config = PackageRoot.url.appendingPathComponent("packaging/config.yaml")
        if FileManager.default.fileExists(atPath: config.path) {
            try expectFile(root.file("etc/mamtelemetryd/config.yaml"), mode: 0o644)
            try expectFile(root.file("usr/share/doc/mamtelemetryd/config.yaml.example"), mode: 0o644)
        } else {
            #expect(result.stderr.contains("config.yaml missing"), "a missing default config must be reported")
        }

        let uninstall = try Command.run(make, ["-C", PackageRoot.url.path, "uninstall", "DESTDIR=\(root.url.path)"])
        #expect(uninstall.status == 0, "make uninstall failed:\n\(uninstall.output)")
        for gone in [
            "usr/lib/systemd/system/mamtelemetryd.service", "usr/lib/systemd/system/mamtelemetryd.socket",
            "usr/lib/systemd/catalog/mamtelemetryd.catalog", "usr/share/doc/mamtelemetryd",
            "usr/share/man/man1/mamtelemetryd.1", "usr/share/man/man1/mamtelemetryctl.1",
        ] {
            #expect(!FileManager.default.fileExists(atPath: root.file(gone).path), "uninstall left \(gone)")
        }
    }

    /// Installed units must name the installed binary and config, not /usr, when an
    /// operator installs under /usr/local.
    @Test("install-data rewrites unit paths for another prefix")
    func installDataFollowsPrefix() throws {
        let make = try SystemdTools.require("make")
        let root = try ScratchDirectory()
        defer { root.remove() }
        let result = try Command.run(
            make,
            [
                "-C", PackageRoot.url.path, "install-data", "DESTDIR=\(root.url.path)",
                "prefix=/usr/local", "sysconfdir=/usr/local/etc",
            ])
        try #require(result.status == 0, "make install-data failed:\n\(result.output)")
        let unit = try String(
            contentsOf: root.file("usr/local/lib/systemd/system/mamtelemetryd.service"), encoding: .utf8)
        #expect(
            unit.contains(
                "ExecStart=/usr/local/bin/mamtelemetryd --config /usr/local/etc/mamtelemetryd/config.yaml\n"))
        #expect(unit.contains("Documentation=file:///usr/local/share/doc/mamtelemetryd/README.systemd.md\n"))
        #expect(!unit.contains("/usr/bin/mamtelemetryd"))
    }

    /// `make install-bin` is pointed at the test build's products, so the libexec layout
    /// (executables beside their resource bundles, relative symlinks in bindir) is
    /// checked without a release build.
    @Test("make install-bin installs executables, resource bundles and bindir symlinks")
    func installBinLayout() throws {
        let make = try SystemdTools.require("make")
        let products = try BuiltProducts.requireDirectory()
        let root = try ScratchDirectory()
        defer { root.remove() }
        let result = try Command.run(
            make,
            [
                "-C", PackageRoot.url.path, "install-bin", "DESTDIR=\(root.url.path)", "SWIFT_BIN_DIR=\(products.path)",
            ])
        try #require(result.status == 0, "make install-bin failed:\n\(result.output)")

        let fm = FileManager.default
        for program in ["mamtelemetryd", "mamtelemetryctl"] {
            try expectFile(root.file("usr/libexec/mamtelemetryd/\(program)"), mode: 0o755)
            let link = try fm.destinationOfSymbolicLink(atPath: root.file("usr/bin/\(program)").path)
            #expect(link == "../libexec/mamtelemetryd/\(program)")
        }
        let bundles = try fm.contentsOfDirectory(atPath: products.path).filter { $0.hasSuffix(".resources") }
        for bundle in bundles {
            var isDirectory: ObjCBool = false
            let installed = root.file("usr/libexec/mamtelemetryd/\(bundle)").path
            #expect(
                fm.fileExists(atPath: installed, isDirectory: &isDirectory) && isDirectory.boolValue,
                "resource bundle \(bundle) not installed beside the executables")
        }
        // Completions written by the installed binaries themselves, for every shell.
        let expected = ["mamtelemetryd": "--retention-prod-max-bytes", "mamtelemetryctl": "events"]
        for (program, word) in expected {
            for path in [
                "usr/share/bash-completion/completions/\(program)", "usr/share/zsh/vendor-completions/_\(program)",
                "usr/share/fish/vendor_completions.d/\(program).fish",
            ] {
                try expectFile(root.file(path), mode: 0o644)
                let text = try String(contentsOf: root.file(path), encoding: .utf8)
                // fish names long options without their dashes (`-l retention-prod-max-bytes`).
                let needle = path.hasSuffix(".fish") ? word.replacingOccurrences(of: "--", with: "") : word
                #expect(text.contains(program) && text.contains(needle), "\(path) does not complete \(word)")
            }
        }
        let bash = try Command.run(
            URL(fileURLWithPath: "/bin/bash"),
            [
                "-c",
                "source \(root.file("usr/share/bash-completion/completions/mamtelemetryd").path) && COMP_WORDS=(mamtelemetryd --retention-prod-max-b) COMP_CWORD=1 && _mamtelemetryd && echo \"${COMPREPLY[*]}\"",
            ])
        #expect(
            bash.status == 0 && bash.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "--retention-prod-max-bytes",
            "\(bash.output)")
    }
}

// MARK: - Helpers

/// Nested in the suite so their names never clash with other files of this test target.
extension SystemdUnitTests {
    fileprivate func expectFile(_ url: URL, mode: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let attributes = try #require(
            try? FileManager.default.attributesOfItem(atPath: url.path),
            "\(url.path) was not installed", sourceLocation: sourceLocation)
        let permissions = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
        #expect(
            permissions == mode, "\(url.path) has mode \(String(permissions, radix: 8))",
            sourceLocation: sourceLocation)
    }

    /// The package root, found from this file's path so the tests work from any cwd.
    fileprivate enum PackageRoot {
        static let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // IntegrationTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()
    }

    /// The unit files shipped under systemd/ (the catalog and README are not units).
    fileprivate enum UnitFiles {
        static let directory = PackageRoot.url.appendingPathComponent("systemd")
        static let suffixes: Set<String> = ["service", "socket", "timer", "path", "target", "mount", "slice"]

        static func all() throws -> [URL] {
            try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
                .filter { suffixes.contains($0.pathExtension) }
                .sorted { $0.lastPathComponent < $1.lastPathComponent }
        }
    }

    /// Where the executables of the build that runs these tests are: beside the test
    /// bundle (so `swift test -c release` checks release binaries), else `.build/debug`.
    fileprivate enum BuiltProducts {
        static func requireDirectory() throws -> URL {
            let selfPath =
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
            var candidates = [URL(fileURLWithPath: selfPath).deletingLastPathComponent()]
            // The test bundle may be a directory (…PackageTests.xctest/…) one level deeper.
            candidates.append(candidates[0].deletingLastPathComponent())
            candidates.append(PackageRoot.url.appendingPathComponent(".build/debug"))
            let found = candidates.first {
                FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("mamtelemetryd").path)
            }
            return try #require(found, "no built mamtelemetryd in \(candidates.map(\.path)): run `swift build` first")
        }
    }

    /// Locates the external tools the suite drives; a missing tool fails loudly.
    fileprivate enum SystemdTools {
        static func require(_ name: String) throws -> URL {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
            let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
            let found = directories.lazy
                .map { URL(fileURLWithPath: $0).appendingPathComponent(name) }
                .first { FileManager.default.isExecutableFile(atPath: $0.path) }
            return try #require(
                found, "\(name) not found in PATH or /usr/bin: install Debian's \(debianPackage[name] ?? name) package")
        }

        static func requireAnalyze() throws -> URL { try require("systemd-analyze") }

        private static let debianPackage = ["systemd-analyze": "systemd", "make": "make"]
    }

    /// A fresh directory under the temp dir, removed by the test that made it.
    fileprivate struct ScratchDirectory {
        let url: URL

        init() throws {
            url = FileManager.default.temporaryDirectory
                .appendingPathComponent("mamtelemetryd-systemd-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }

        func file(_ relative: String) -> URL { url.appendingPathComponent(relative) }

        func remove() { try? FileManager.default.removeItem(at: url) }
    }

    /// Runs a tool to completion with its output captured in files (no pipe to fill up),
    /// killing it if it runs past `timeout` so a hung tool cannot hang the suite.
    fileprivate enum Command {
        struct Result {
            let status: Int32
            let stdout: String
            let stderr: String
            var output: String { (stdout + stderr).trimmingCharacters(in: .whitespacesAndNewlines) }
        }

        static func run(_ tool: URL, _ arguments: [String], timeout: TimeInterval = 120) throws -> Result {
            let scratch = try ScratchDirectory()
            defer { scratch.remove() }
            let outURL = scratch.file("stdout")
            let errURL = scratch.file("stderr")
            _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
            _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
            let out = try FileHandle(forWritingTo: outURL)
            let err = try FileHandle(forWritingTo: errURL)
            defer {
                try? out.close()
                try? err.close()
            }

            let process = Process()
            process.executableURL = tool
            process.arguments = arguments
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = out
            process.standardError = err
            // Keep tool messages in English so the assertions on them hold.
            var environment = ProcessInfo.processInfo.environment
            environment["LC_ALL"] = "C.UTF-8"
            environment["SYSTEMD_COLORS"] = "0"
            environment["SYSTEMD_PAGER"] = ""
            process.environment = environment
            try process.run()
            let deadline = Date().addingTimeInterval(timeout)
            while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
            if process.isRunning {
                process.terminate()
                process.waitUntilExit()
                let command = ([tool.lastPathComponent] + arguments).joined(separator: " ")
                Issue.record("\(command) timed out after \(timeout)s")
            }
            process.waitUntilExit()
            return Result(
                status: process.terminationStatus,
                stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
                stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
        }
    }
}
