// swift-tools-version: 6.1
// The driver of `make bench-shared` (Benchmarks/README.md, "The shared store on PostgreSQL"): a package of its own, so
// that token-cache's `swift build` / `swift test` never compile it. It measures the shared store through the library
// (`TokenCache`, `TokenCachePostgreSQL`, the `TokenCacheBenchmarking` SPI) and, for comparison, the one-blob-per-user
// design on the same server through postgres-nio directly (the client the shared store itself uses).
import PackageDescription

let package = Package(
    name: "TokenCacheSharedStoreBenchmark",
    dependencies: [
        // `name:` fixes the identity whatever the checkout directory is called.
        .package(name: "token-cache", path: "../../"),
        // The version token-cache resolves (its Package.resolved), so that both graphs build the same client.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        .executableTarget(
            name: "SharedStoreBench",
            dependencies: [
                .product(name: "TokenCache", package: "token-cache"),
                .product(name: "TokenCacheMSAL", package: "token-cache"),
                .product(name: "TokenCacheClient", package: "token-cache"),
                .product(name: "TokenCachePostgreSQL", package: "token-cache"),
                .product(name: "TokenCacheBenchmarking", package: "token-cache"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            path: "Sources/SharedStoreBench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
