// swift-tools-version: 6.1
// A separate package so that `swift build` / `swift test` of token-cache never resolve the benchmark graph.
// Run: cd Benchmarks && swift package --disable-sandbox benchmark
import PackageDescription

let package = Package(
    name: "TokenCacheBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        // `name:` fixes the identity whatever the checkout directory is called.
        .package(name: "token-cache", path: "../"),
        // Only `MallocInterposer`: the default `RuntimeInterposer` trait pulls in ordo-one/swift-runtime-interposer
        // on Linux + Swift 6.3, which mirror-only builds cannot fetch. Malloc counts need `MallocInterposer`.
        .package(url: "https://github.com/ordo-one/package-benchmark.git", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "TokenCacheBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "package-benchmark"),
                .product(name: "TokenCache", package: "token-cache"),
            ],
            path: "TokenCacheBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "package-benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
