// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "token-cache",
    products: [
        .library(name: "TokenCache", targets: ["TokenCache"]),
        .library(name: "TokenCacheMSAL", targets: ["TokenCacheMSAL"]),
        .library(name: "TokenCacheOperations", targets: ["TokenCacheOperations"]),
        // For the Benchmarks/ package only: its declarations are SPI (`@_spi(Benchmarking)`), not an app API.
        .library(name: "TokenCacheBenchmarking", targets: ["TokenCacheBenchmarking"]),
        .library(name: "TokenCacheClient", targets: ["TokenCacheClient"]),
        .library(name: "TokenCachePostgreSQL", targets: ["TokenCachePostgreSQL"]),
        .executable(name: "cachetool", targets: ["cachetool"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // The server-side Swift conventions for logging and metrics, used by the client layer only (the core stays
        // free of them).
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        // The shared store's PostgreSQL client, and the event loops and TLS it runs on (its module only).
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    ],
    targets: [
        // The only two modules that see C. Each wrapper exposes `package` declarations only.
        .systemLibrary(
            name: "CLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"]), .yum(["lmdb-devel"])]
        ),
        .systemLibrary(
            name: "CSodium",
            pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"]), .brew(["libsodium"]), .yum(["libsodium-devel"])]
        ),
        // Fatal-signal handlers that replace the Swift runtime's backtracer (signal handlers belong in C).
        .target(name: "CCrashGuard"),
        // cachetool's crash handler, installed before every library initialiser (the Swift runtime's among them).
        .target(name: "CCacheToolStartup", dependencies: ["CCrashGuard"]),
        // What `cachetool bench` counts besides time: allocations (a counting front of the C allocator, linked into the
        // executable only) and hardware instruction counters.
        .target(name: "CBenchProbes"),
        // What keeps cachetool's reading child from outliving it: the parent's signal forwarding and the child's death
        // signal (prctl is variadic, and signal handlers belong in C).
        .target(name: "CChildLifetime"),
        // How many terminal columns a character takes, from the C library's tables (for cachetool's tables).
        .target(name: "CDisplayWidth"),
        // Constant-time base64url for token material (records keep JWT segments decoded, FORMAT.md §5.3): an SSSE3
        // encoder for the lookup path, where every hit re-encodes its token, and portable arithmetic elsewhere. No
        // packaged codec is constant-time and fast both (libsodium's is constant-time at ~20 instructions a byte).
        .target(name: "CBase64URL"),
        .target(name: "TokenCacheLMDB", dependencies: ["CLMDB"]),
        .target(name: "TokenCacheSodium", dependencies: ["CSodium"]),
        // The storage seam and its backends: the only module above the LMDB wrapper that sees it.
        .target(name: "TokenCacheStorage", dependencies: ["TokenCacheLMDB"]),
        // The record format (FORMAT.md): bytes, field maps, envelopes, the header, keyring and blind index. It knows
        // no entity and no backend.
        .target(name: "TokenCacheRecords", dependencies: ["TokenCacheSodium", "CBase64URL"]),
        // The entities as plain values and the MSAL cache rules as pure functions, with the one error type. It knows no
        // codec, record, key or backend; the rules are `package`, so the client calls them instead of copying them.
        // It uses the record module's ASCII folding (FORMAT.md's `ascii_lower`, one definition for keys and
        // comparisons) and libsodium's wiping of secrets, nothing else below it.
        .target(name: "TokenCacheModel", dependencies: ["TokenCacheRecords", "TokenCacheSodium"]),
        .target(name: "TokenCache", dependencies: ["TokenCacheModel", "TokenCacheRecords", "TokenCacheStorage", "TokenCacheSodium", "CCrashGuard"]),
        // Import and export of MSAL's serialized caches (every SDK's spelling), on the library's API: the interop an
        // app or cachetool adds when it moves tokens between MSAL and this store.
        .target(name: "TokenCacheMSAL", dependencies: ["TokenCache", "TokenCacheRecords", "TokenCacheStorage"]),
        // An operator's commands on a whole store: backup and compaction, repair, salvage and quarantine, rekeying and
        // data-key rotation, purging expired tokens, setting the access-token cap, statistics. They run over the
        // storage seam's maintenance protocols and the record store's package API; no write or lookup needs them.
        .target(name: "TokenCacheOperations", dependencies: ["TokenCache", "TokenCacheRecords", "TokenCacheStorage", "TokenCacheSodium"]),
        // What `cachetool bench` and the Benchmarks/ package measure with (SPI, no app API): the synthetic population,
        // the get + decrypt floor, percentiles. Nothing else links it.
        .target(name: "TokenCacheBenchmarking", dependencies: ["TokenCache", "TokenCacheMSAL", "TokenCacheRecords", "TokenCacheSodium", "TokenCacheStorage"]),
        // What an auth client calls: async, the whole silent flow with single-flight refresh, writes off the
        // cooperative pool.
        .target(
            name: "TokenCacheClient",
            dependencies: [
                "TokenCache", .product(name: "Logging", package: "swift-log"), .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        // The shared store: a backend of the storage seam on PostgreSQL, for several hosts serving one cache. The only
        // module that sees NIO; the core knows it as one more `StorageLocation`.
        .target(
            name: "TokenCachePostgreSQL",
            dependencies: [
                "TokenCache", "TokenCacheStorage", "TokenCacheSodium", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
            ]
        ),
        .executableTarget(
            name: "cachetool",
            dependencies: [
                "TokenCache",
                "TokenCacheMSAL",
                "TokenCacheOperations",
                "TokenCacheBenchmarking",
                "TokenCacheClient",
                "TokenCachePostgreSQL",
                "CCacheToolStartup",
                "CBenchProbes",
                "CChildLifetime",
                "CDisplayWidth",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // What the test targets share (fixtures, generators, response builders, exit-test conditions, README
        // snippets). It imports none of the package's modules, so that every test target can link it.
        .target(name: "TestSupport", path: "Tests/TestSupport", exclude: ["MSALFixtures"]),
        .testTarget(name: "TokenCacheLMDBTests", dependencies: ["TokenCacheLMDB", "TestSupport"]),
        .testTarget(name: "TokenCacheSodiumTests", dependencies: ["TokenCacheSodium", "TestSupport"]),
        .testTarget(
            name: "TokenCacheTests",
            dependencies: [
                "TokenCache", "TokenCacheModel", "TokenCacheMSAL", "TokenCacheOperations", "TokenCacheBenchmarking", "TokenCacheRecords", "TokenCacheStorage",
                "TokenCacheLMDB", "TokenCacheSodium", "TokenCachePostgreSQL", "TestSupport", "CBase64URL",
            ],
            resources: [.copy("FormatVectors")]
        ),
        .testTarget(
            name: "TokenCacheClientTests",
            dependencies: [
                "TokenCacheClient", "TokenCache", "TokenCacheOperations", "TokenCachePostgreSQL", "TestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"), .product(name: "MetricsTestKit", package: "swift-metrics"),
            ]
        ),
        .testTarget(
            name: "CacheToolTests", dependencies: ["cachetool", "TokenCache", "TokenCacheMSAL", "TokenCacheOperations", "TokenCachePostgreSQL", "TokenCacheBenchmarking", "TokenCacheLMDB", "TokenCacheRecords", "TokenCacheStorage", "TestSupport"], exclude: ["InspectGoldens", "TableGoldens"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The same upcoming features everywhere. InternalImportsByDefault makes the compiler, not review,
// keep C types out of every public and package API.
for target in package.targets where target.type != .system && !["CCrashGuard", "CCacheToolStartup", "CBenchProbes", "CChildLifetime", "CDisplayWidth", "CBase64URL"].contains(target.name) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    target.swiftSettings = settings
}
