// swift-tools-version: 6.1
import PackageDescription

/// The component benchmarks, a package of their own so that building the daemon (and CI's
/// clean build) never resolves or compiles the benchmark framework. It uses the project's
/// libraries through the root package's library products.
///
/// - `HotPaths`: each measured operation once, on fixed seeded data, shared by both runners.
/// - `Components` (ordo-one/benchmark): throughput and mallocs, `swift package benchmark`.
/// - `hotpath-count`: runs one named hot path N times, for `scripts/callgrind.sh`.
let package = Package(
    name: "mamtelemetryd-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "mamtelemetryd", path: ".."),
        // The malloc interposer gives the malloc counts; naming the trait alone leaves out the
        // Swift runtime interposer, which is not in the package mirror.
        // Already in the root package's graph; named here because HotPaths imports them.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .target(
            name: "HotPaths",
            dependencies: [
                .product(name: "TelemetryModel", package: "mamtelemetryd"),
                .product(name: "Compression", package: "mamtelemetryd"),
                .product(name: "StoreCore", package: "mamtelemetryd"),
                .product(name: "TelemetryStore", package: "mamtelemetryd"),
                .product(name: "Privacy", package: "mamtelemetryd"),
                .product(name: "Bundles", package: "mamtelemetryd"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]),
        .executableTarget(name: "hotpath-count", dependencies: ["HotPaths"]),
        .executableTarget(
            name: "Components",
            dependencies: ["HotPaths", .product(name: "Benchmark", package: "benchmark")],
            path: "Benchmarks/Components",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
    ]
)
