import Foundation
import Testing

@testable import cachetool

/// A store location that looks like a URL is refused by every verb (exit 64) before anything is created, instead of
/// being taken for a relative directory named after the scheme.
@Suite struct StoreLocationTests {
    @Test func aURLIsRecognisedByItsScheme() {
        for url in ["postgresql://user@host/db", "file:///var/lib/tokens", "s3://bucket/key", "redis+tls://h:6379", "A.b-c://x"] {
            #expect(StoreLocation.urlScheme(of: url) != nil, "\(url)")
        }
        for path in ["/var/lib/token-cache", "relative/dir", "./postgresql://x", "dir:with:colons", "1abc://x", "a b://x", "http:/one-slash", ""] {
            #expect(StoreLocation.urlScheme(of: path) == nil, "\(path)")
        }
    }

    @Test func everyVerbRefusesAStoreGivenAsAURLAndCreatesNothing() throws {
        try CLIStore.with { store in
            let workingDirectory = store.root + "/cwd"
            try FileManager.default.createDirectory(atPath: workingDirectory, withIntermediateDirectories: false)
            let verbs: [[String]] = [
                ["init"], ["info"], ["inspect"], ["verify"], ["stats"], ["accounts"], ["sample-data"], ["compact"],
                ["backup", "-o", "copy"], ["salvage", "-o", "copy"], ["purge-expired"], ["export", "-o", "out.json"],
            ]
            for verb in verbs {
                let run = try CacheTool.run(
                    verb + ["--store", "postgresql://tokens@db.example/cache"], environment: ["TOKEN_CACHE_KEY_FILE": store.keyFile],
                    shell: "cd '\(workingDirectory)'"
                )
                #expect(run.exitedNormally && run.status == 64, "\(verb[0]): \(run.output)")
                #expect(run.stderr.contains("stores at a URL (postgresql://) are not supported by this version"), "\(verb[0]): \(run.stderr)")
            }
            let fromEnvironment = try CacheTool.run(["info"], environment: ["TOKEN_CACHE_DIR": "file:///tmp/tokens"], shell: "cd '\(workingDirectory)'")
            #expect(fromEnvironment.status == 64 && fromEnvironment.stderr.contains("TOKEN_CACHE_DIR: file:///tmp/tokens is a URL"), "\(fromEnvironment.output)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: workingDirectory).isEmpty)
        }
    }
}
