// swift-tools-version: 6.1
// The example app: a command-line client of a (fake, local) identity provider that keeps its tokens in token-cache
// through TokenCacheClient. Its own package, so that the library's build never resolves it.
// Run: ./run-example.sh (starts the fake provider on loopback, walks through the flows, checks what happened).
import PackageDescription

let package = Package(
    name: "TokenCacheExamples",
    dependencies: [
        .package(name: "token-cache", path: "../"),
    ],
    targets: [
        .executableTarget(
            name: "token-cache-demo",
            dependencies: [.product(name: "TokenCacheClient", package: "token-cache")],
            path: "Sources/TokenCacheDemo"
        ),
    ],
    swiftLanguageModes: [.v6]
)
