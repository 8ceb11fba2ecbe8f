// swift-tools-version: 6.1
// The example apps, clients of a (fake, local) identity provider that keep their tokens in token-cache through
// TokenCacheClient. Its own package, so that the library's build never resolves Hummingbird.
// - token-cache-demo: a command-line client on a directory store; run ./run-example.sh.
// - token-cache-web: a web host of a server farm whose instances share one store on PostgreSQL; run
//   ./run-farm-example.sh.
import PackageDescription

let package = Package(
    name: "TokenCacheExamples",
    dependencies: [
        .package(name: "token-cache", path: "../"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        // Already in the build through the library and postgres-nio: the web host's log and metrics backends, and the
        // SHA-256 of the token fingerprints it reports.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "token-cache-demo",
            dependencies: [.product(name: "TokenCacheClient", package: "token-cache")],
            path: "Sources/TokenCacheDemo"
        ),
        .executableTarget(
            name: "token-cache-web",
            dependencies: [
                .product(name: "TokenCacheClient", package: "token-cache"),
                .product(name: "TokenCachePostgreSQL", package: "token-cache"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources/TokenCacheWeb"
        ),
    ],
    swiftLanguageModes: [.v6]
)
