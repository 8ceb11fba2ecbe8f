// swift-tools-version: 6.1
// The driver of `make instructions` (README.md, "Instruction counts"): a package of its own, so that token-cache's
// `swift build` / `swift test` never compile it, and so that the same source builds against another checkout of the
// library (the script copies this folder into that checkout at the same place, `Benchmarks/Instructions/`).
// It uses nothing but the public API of the `TokenCache` product.
import PackageDescription

let package = Package(
    name: "TokenCacheInstructions",
    dependencies: [
        // `name:` fixes the identity whatever the checkout directory is called (a temporary worktree, too).
        .package(name: "token-cache", path: "../../"),
    ],
    targets: [
        // Valgrind's client requests (CALLGRIND_START_INSTRUMENTATION, ZERO_STATS, DUMP_STATS_AT): C macros, hence C.
        .target(name: "CCallgrindRequests", path: "Sources/CCallgrindRequests"),
        .executableTarget(
            name: "InstructionsDriver",
            dependencies: [.product(name: "TokenCache", package: "token-cache"), "CCallgrindRequests"],
            path: "Sources/InstructionsDriver"
        ),
    ],
    swiftLanguageModes: [.v6]
)
