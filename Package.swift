// swift-tools-version: 6.1
import Foundation
import PackageDescription

/// The upcoming language features hummingbird builds with, on in every source target but OTLP
/// (its generated code imports SwiftProtobuf without an access level): imports are internal
/// unless marked `public import`, so the compiler refuses a public signature that names a GRDB
/// type; members are visible only from modules a file imports; existentials are spelled `any`.
let strictLanguage: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// The target graph is ordered by dependency weight, so each library pulls only what it needs
/// (ARCHITECTURE.md draws it): the wire model and compression need nothing but zlib; privacy
/// (pseudonyms, redaction), archives and the Info.plist readers are small leaves; all systemd
/// code (journal, sd_notify, watchdog, socket activation) is one target, glibc heap tuning
/// another; callers program against the backend-neutral StoreCore, only the SQLite engine
/// (TelemetryStore) and the control state link GRDB, and only the server links Hummingbird.
/// The CLI and the load generator link neither.
let package = Package(
    name: "mamtelemetryd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "mamtelemetryd", targets: ["mamtelemetryd"]),
        .executable(name: "mamtelemetryctl", targets: ["mamtelemetryctl"]),
        // The load generator: a developer tool (benchmarks, soaks), not shipped in the .deb.
        .executable(name: "mamtelemetry-bench", targets: ["mamtelemetry-bench"]),
        // The libraries the component benchmarks (the nested package in Benchmarks/) call: a
        // package that depends on this one by path can use only its products. Declaring them
        // builds nothing more for the daemon, the CLI or the tests.
        .library(name: "TelemetryModel", targets: ["TelemetryModel"]),
        .library(name: "Compression", targets: ["Compression"]),
        .library(name: "StoreCore", targets: ["StoreCore"]),
        .library(name: "TelemetryStore", targets: ["TelemetryStore"]),
        .library(name: "Privacy", targets: ["Privacy"]),
        .library(name: "Bundles", targets: ["Bundles"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(
            url: "https://github.com/apple/swift-configuration.git", from: "1.4.0",
            traits: [.defaults, "CommandLineArguments", "YAML"]),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
    ],
    targets: [
        // MARK: C system libraries (thin shims for macros Swift cannot import)
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]),
        // Reads of stored zlib blocks of known size (zlib itself writes them).
        .systemLibrary(
            name: "CLibdeflate", pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(
            name: "CSystemd", pkgConfig: "libsystemd",
            providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(
            name: "CArchive", pkgConfig: "libarchive",
            providers: [.apt(["libarchive-dev"])]),
        // glibc's <malloc.h>: part of libc6-dev, nothing to link.
        .systemLibrary(name: "CMalloc"),

        // MARK: Libraries
        .target(name: "TelemetryModel", swiftSettings: strictLanguage),
        .target(name: "Compression", dependencies: ["CZlib", "CLibdeflate"], swiftSettings: strictLanguage),
        // What every backend shares and every caller programs against: the `RecordStore`,
        // `CommitQueue`, `RetentionStore` and `Spool` protocols, queries, requests, stored
        // records, incidents, retention and the disk guard. No GRDB, no SQLite.
        .target(
            name: "StoreCore",
            dependencies: [
                "TelemetryModel",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictLanguage),
        // `control.sqlite`: tokens, the app registry, the drop ledger. GRDB stays internal.
        .target(
            name: "ControlState",
            dependencies: [
                "StoreCore", "TelemetryModel",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictLanguage),
        .target(
            name: "TelemetryStore",
            dependencies: [
                "StoreCore", "TelemetryModel", "Compression",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictLanguage),
        // The scale-out backend: an HTTP client for ClickHouse, the one SQL binder, the schema and
        // the forwarder that ships the embedded store's committed batches (the spool).
        .target(
            name: "ClickHouseStore",
            dependencies: [
                "TelemetryModel", "StoreCore", "Compression",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictLanguage),
        .target(
            name: "Systemd",
            dependencies: [
                "CSystemd", "TelemetryModel",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictLanguage),
        // The daemon's memory behaviour: glibc heap thresholds, the trim service, cold code pages
        // handed back, and the /proc figures they decide by. Nothing else links CMalloc.
        .target(
            name: "ProcessMemory",
            dependencies: ["CMalloc", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")],
            swiftSettings: strictLanguage),
        // `RecordVisibility` conforms to the store's `RecordPresenter` here, beside the rule itself.
        .target(
            name: "Privacy", dependencies: ["TelemetryModel", "StoreCore", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: strictLanguage),
        .target(
            name: "Archive", dependencies: ["CArchive", .product(name: "Crypto", package: "swift-crypto")], swiftSettings: strictLanguage),
        .target(name: "InfoPlist", dependencies: ["TelemetryModel"], swiftSettings: strictLanguage),
        .target(name: "Bundles", dependencies: ["TelemetryModel", "StoreCore", "Privacy", "Archive"], swiftSettings: strictLanguage),
        // OTLP/HTTP logs: protobuf or JSON bytes in, native records out. The generated code is
        // committed (Generated/README.md says how it was made); only the runtime is a dependency.
        .target(
            name: "OTLP",
            dependencies: ["TelemetryModel", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            exclude: ["Generated/README.md"]),
        // The browser support console's assets, embedded at build time by the plugin below.
        .target(
            name: "SupportConsole",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            exclude: ["Assets"],
            swiftSettings: strictLanguage,
            plugins: ["EmbedConsoleAssets"]),
        .executableTarget(name: "ConsoleAssetEmbedder", swiftSettings: strictLanguage),
        .plugin(name: "EmbedConsoleAssets", capability: .buildTool(), dependencies: ["ConsoleAssetEmbedder"]),
        .target(
            name: "TelemetryServer",
            dependencies: [
                "TelemetryModel", "Compression", "StoreCore", "ControlState", "TelemetryStore", "ClickHouseStore", "Systemd",
                "Privacy", "Bundles", "SupportConsole", "OTLP", "ProcessMemory",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictLanguage),

        // MARK: Executables
        .executableTarget(name: "mamtelemetryd", dependencies: ["TelemetryServer"], swiftSettings: strictLanguage),
        // `--url` and `--token` (and where a client finds a token), shared by the two client programs.
        .target(
            name: "ClientOptions", dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strictLanguage),
        .executableTarget(
            name: "mamtelemetryctl",
            dependencies: [
                "TelemetryModel", "Archive", "InfoPlist", "ClientOptions",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictLanguage),
        // Generated NDJSON/OTLP load against a daemon; bodies are compressed by the Compression
        // target, the same zlib code the daemon decodes them with.
        .executableTarget(
            name: "mamtelemetry-bench",
            dependencies: [
                "TelemetryModel", "Compression", "OTLP", "ClientOptions",
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strictLanguage),

        // MARK: Tests
        /// What the test targets share: the built daemon as a child process (port learned from
        /// its readiness notification), a notify socket, reaping by pid; and the requests,
        /// fixtures and follow client that process and in-process suites both use.
        .target(
            name: "TestSupport",
            dependencies: [
                "TelemetryModel", "Compression",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/TestSupport"),
        /// A second, independent reading of console-export text: the oracle of the text-export
        /// property test and of the `FuzzTextLog` fuzzer (the Fuzz package links it too).
        .target(name: "TextExportReference", dependencies: ["TelemetryModel"], path: "Tests/TextExportReference"),
        .testTarget(name: "TelemetryModelTests", dependencies: ["TelemetryModel", "TestSupport", "TextExportReference"]),
        .testTarget(name: "CompressionTests", dependencies: ["Compression", "TestSupport"]),
        .testTarget(
            name: "OTLPTests",
            dependencies: ["OTLP", "TelemetryModel", .product(name: "SwiftProtobuf", package: "swift-protobuf")]),
        .testTarget(
            name: "ControlStateTests", dependencies: ["ControlState", "StoreCore", .product(name: "GRDB", package: "GRDB.swift")]),
        .testTarget(
            name: "TelemetryStoreTests",
            dependencies: [
                "TelemetryStore", "StoreCore", "ControlState", "Compression", "TestSupport",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]),
        .testTarget(
            name: "SystemdTests",
            dependencies: [
                "Systemd", .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]),
        .testTarget(name: "ProcessMemoryTests", dependencies: ["ProcessMemory"]),
        .testTarget(
            name: "PrivacyTests",
            dependencies: ["Privacy", "TelemetryModel", "TestSupport", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(
            name: "ClickHouseStoreTests",
            dependencies: [
                "ClickHouseStore", "TelemetryStore", "TelemetryModel", "Compression", "TestSupport",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        .testTarget(name: "InfoPlistTests", dependencies: ["InfoPlist", "TelemetryModel"]),
        .testTarget(
            name: "BundlesTests",
            dependencies: ["Bundles", "Privacy", "Archive", "TelemetryStore", .product(name: "Metrics", package: "swift-metrics")]),
        .testTarget(
            name: "TelemetryServerTests",
            dependencies: [
                "TelemetryServer", "ControlState", "Compression", "OTLP", "TestSupport", "Systemd", "Privacy", "Bundles",
                "ProcessMemory",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "SwiftProtobuf", package: "swift-protobuf"),
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "TelemetryModel", "TelemetryStore", "Compression", "TestSupport",
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            exclude: ["journald-harness.sh", "otlp-emit.py"]),
    ]
)

/// CI (`CI=true`, as the CI runner sets it) treats warnings in our own targets as errors, so
/// a warning never lands; a developer's local build only warns, so a newer compiler's new
/// diagnostic does not stop work in progress. Dependencies are not affected.
if ProcessInfo.processInfo.environment["CI"] == "true" {
    for target in package.targets where target.type != .system && target.type != .plugin {
        target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-warnings-as-errors"])]
    }
}
