// swift-tools-version: 6.1
import PackageDescription

/// libFuzzer targets for the daemon's input parsers (issue 7, item 7).
///
/// The root package exposes only executable products, so another package cannot import its
/// library targets. Instead this package compiles the same sources: `scripts/fuzz.sh` links
/// `Sources/TelemetryModel`, `Sources/Compression`, `Sources/InfoPlist`, `Sources/CZlib` and `Sources/CLibdeflate` here (SwiftPM wants
/// target paths inside the package root; `Sources/OTLP` too, whose only outside dependency is
/// the SwiftProtobuf runtime, and `Sources/Privacy`, whose only one is swift-crypto once its presenter conformance is left out), and the test oracle
/// `Tests/TextExportReference`. Build only with `scripts/fuzz.sh`, which passes
/// `-sanitize=fuzzer,address` and keeps the build in `Fuzz/.build`, apart from the root's.
let package = Package(
    name: "MamTelemetryFuzz",
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    ],
    targets: [
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        .systemLibrary(name: "CLibdeflate", path: "Sources/CLibdeflate"),
        .systemLibrary(name: "CLibFuzzer"),
        .target(name: "TelemetryModel", path: "Sources/TelemetryModel"),
        .target(name: "Compression", dependencies: ["CZlib", "CLibdeflate"], path: "Sources/Compression"),
        .target(name: "InfoPlist", dependencies: ["TelemetryModel"], path: "Sources/InfoPlist"),
        .target(name: "TextExportReference", dependencies: ["TelemetryModel"], path: "Sources/TextExportReference"),
        .target(
            name: "OTLP", dependencies: ["TelemetryModel", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            path: "Sources/OTLP", exclude: ["Generated/README.md"]),
        .target(
            name: "Privacy", dependencies: ["TelemetryModel", .product(name: "Crypto", package: "swift-crypto")], path: "Sources/Privacy",
            // The presenter conformance ties Privacy to the store's API (StoreCore); the
            // redactor the fuzzer drives does not need it.
            exclude: ["RecordVisibility+RecordPresenter.swift"]),

        // One executable per parser: `LLVMFuzzerTestOneInput` plus a main that runs libFuzzer's driver.
        .executableTarget(name: "FuzzEventDecoder", dependencies: ["CLibFuzzer", "TelemetryModel"]),
        .executableTarget(name: "FuzzTextLog", dependencies: ["CLibFuzzer", "TelemetryModel", "TextExportReference"]),
        .executableTarget(name: "FuzzContentDecoding", dependencies: ["CLibFuzzer", "Compression"]),
        .executableTarget(name: "FuzzPlist", dependencies: ["CLibFuzzer", "InfoPlist"]),
        .executableTarget(name: "FuzzOTLP", dependencies: ["CLibFuzzer", "OTLP", "TelemetryModel"]),
        .executableTarget(
            name: "FuzzRedactor",
            dependencies: ["CLibFuzzer", "Privacy", "TelemetryModel", .product(name: "Crypto", package: "swift-crypto")]),
        .executableTarget(name: "FuzzCanonicalJSON", dependencies: ["CLibFuzzer", "TelemetryModel"]),
    ]
)
