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
        // The repository's current name (`ordo-one/package-benchmark` redirects here and still resolves, but the
        // plugin then warns on every run that the legacy identifier will stop being supported); the package
        // identity is the URL's last path component, hence `package: "benchmark"` below.
        // Only `MallocInterposer`: the default `RuntimeInterposer` trait pulls in ordo-one/swift-runtime-interposer
        // on Linux + Swift 6.3, which mirror-only builds cannot fetch. Malloc counts need `MallocInterposer`.
        .package(url: "https://github.com/ordo-one/benchmark.git", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // The raw baseline ("raw LMDB get + decrypt 1 KiB") calls the C libraries directly. Own module names, so they
        // never collide with token-cache's internal CLMDB / CSodium modules.
        .systemLibrary(
            name: "CLMDBBench", path: "Sources/CLMDBBench", pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"]), .yum(["lmdb-devel"])]
        ),
        .systemLibrary(
            name: "CSodiumBench", path: "Sources/CSodiumBench", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"]), .yum(["libsodium-devel"])]
        ),
        .executableTarget(
            name: "TokenCacheBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "TokenCache", package: "token-cache"),
                .product(name: "TokenCacheBenchmarking", package: "token-cache"),
                "CLMDBBench",
                "CSodiumBench",
            ],
            path: "TokenCacheBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
