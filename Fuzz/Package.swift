// swift-tools-version: 6.1
import PackageDescription

/// libFuzzer targets for the daemon's input parsers (issue 7, item 7).
///
/// The root package exposes only executable products, so another package cannot import its
/// library targets. Instead this package compiles the same sources: `scripts/fuzz.sh` links
/// `Sources/TelemetryModel`, `Sources/Compression`, `Sources/InfoPlist` and `Sources/CZlib` here (SwiftPM wants
/// target paths inside the package root; `Sources/OTLP` too, whose only outside dependency is
/// the SwiftProtobuf runtime). Build only with `scripts/fuzz.sh`, which passes
/// `-sanitize=fuzzer,address` and keeps the build in `Fuzz/.build`, apart from the root's.
let package = Package(
    name: "MamTelemetryFuzz",
    dependencies: [
        .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0")
    ],
    targets: [
        .systemLibrary(name: "CZlib", path: "Sources/CZlib"),
        .systemLibrary(name: "CLibFuzzer"),
        .target(name: "TelemetryModel", path: "Sources/TelemetryModel"),
        .target(name: "Compression", dependencies: ["CZlib"], path: "Sources/Compression"),
        .target(name: "InfoPlist", dependencies: ["TelemetryModel"], path: "Sources/InfoPlist"),
        .target(
            name: "OTLP", dependencies: ["TelemetryModel", .product(name: "SwiftProtobuf", package: "swift-protobuf")],
            path: "Sources/OTLP", exclude: ["Generated/README.md"]),

        // One executable per parser: `LLVMFuzzerTestOneInput` plus a main that runs libFuzzer's driver.
        .executableTarget(name: "FuzzEventDecoder", dependencies: ["CLibFuzzer", "TelemetryModel"]),
        .executableTarget(name: "FuzzTextLog", dependencies: ["CLibFuzzer", "TelemetryModel"]),
        .executableTarget(name: "FuzzContentDecoding", dependencies: ["CLibFuzzer", "Compression"]),
        .executableTarget(name: "FuzzPlist", dependencies: ["CLibFuzzer", "InfoPlist"]),
        .executableTarget(name: "FuzzOTLP", dependencies: ["CLibFuzzer", "OTLP", "TelemetryModel"]),
        .executableTarget(name: "FuzzCanonicalJSON", dependencies: ["CLibFuzzer", "TelemetryModel"]),
    ]
)
