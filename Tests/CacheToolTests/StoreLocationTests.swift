import Foundation
import Testing

@testable import cachetool

/// A store location is a directory or a shared store's PostgreSQL URL. Any other URL, and a PostgreSQL URL that is not
/// usable, is refused by every verb (exit 64) before anything is created, instead of being taken for a relative
/// directory named after the scheme; a usable URL whose server does not answer fails within the deadline (exit 69).
@Suite struct StoreLocationTests {
    @Test func aURLIsRecognisedByItsScheme() {
        for url in ["postgresql://user@host/db", "file:///var/lib/tokens", "s3://bucket/key", "redis+tls://h:6379", "A.b-c://x"] {
            #expect(StoreLocation.urlScheme(of: url) != nil, "\(url)")
        }
        for path in ["/var/lib/token-cache", "relative/dir", "./postgresql://x", "dir:with:colons", "1abc://x", "a b://x", "http:/one-slash", ""] {
            #expect(StoreLocation.urlScheme(of: path) == nil, "\(path)")
        }
    }

    static let verbs: [[String]] = [
        ["init"], ["info"], ["inspect"], ["verify"], ["stats"], ["accounts"], ["sample-data"], ["compact"],
        ["backup", "-o", "copy"], ["salvage", "-o", "copy"], ["purge-expired"], ["export", "-o", "out.json"],
    ]

    @Test func everyVerbRefusesAnUnsupportedOrUnusableURLAndCreatesNothing() throws {
        try CLIStore.with { store in
            let workingDirectory = store.root + "/cwd"
            try FileManager.default.createDirectory(atPath: workingDirectory, withIntermediateDirectories: false)
            let refusals = [
                ("file:///var/lib/tokens", "a store at a file://… URL is not supported"),
                ("postgresql://tokens@db.example/cache?sslmode=disable", "sslmode=disable would send"),
                ("postgresql://tokens@db.example/cache?sslmode=verify-fulll", "sslmode \"verify-fulll\" is none of"),
                ("postgres://tokens@db.example/cache?pasword=x", "the parameter \"pasword\" is not one this store knows"),
            ]
            for verb in Self.verbs {
                for (url, reason) in refusals {
                    let run = try CacheTool.run(
                        verb + ["--store", url], environment: ["TOKEN_CACHE_KEY_FILE": store.keyFile], shell: "cd '\(workingDirectory)'"
                    )
                    #expect(run.exitedNormally && run.status == 64, "\(verb[0]) \(url): \(run.output)")
                    #expect(run.stderr.contains(reason), "\(verb[0]) \(url): \(run.stderr)")
                }
            }
            let fromEnvironment = try CacheTool.run(["info"], environment: ["TOKEN_CACHE_DIR": "file:///tmp/tokens"], shell: "cd '\(workingDirectory)'")
            #expect(fromEnvironment.status == 64 && fromEnvironment.stderr.contains("TOKEN_CACHE_DIR: a store at a file://"), "\(fromEnvironment.output)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: workingDirectory).isEmpty)
        }
    }

    /// A server that is not there: every verb gives up within the deadline with `storeUnavailable`, naming the server
    /// and never a password, and nothing is created where it ran.
    @Test func everyVerbFailsWithinTheDeadlineWhenTheServerIsNotThere() throws {
        try CLIStore.with { store in
            let workingDirectory = store.root + "/cwd"
            try FileManager.default.createDirectory(atPath: workingDirectory, withIntermediateDirectories: false)
            let url = "postgresql://tokens:CANARY-PASSWORD@/cache?host=\(store.root)/no-server"
            for verb in Self.verbs {
                let started = ContinuousClock.now
                let run = try CacheTool.run(
                    verb + ["--store", url], environment: ["TOKEN_CACHE_KEY_FILE": store.keyFile, "TOKEN_CACHE_STORE_TIMEOUT": "1s"],
                    shell: "cd '\(workingDirectory)'"
                )
                #expect(ContinuousClock.now - started < .seconds(20), "\(verb[0]) took too long")
                #expect(run.exitedNormally && [69, 78].contains(run.status), "\(verb[0]): \(run.output)")
                #expect(!run.output.contains("CANARY-PASSWORD"), "\(verb[0]) printed the password")
                if run.status == 69 { #expect(run.stderr.contains("storeUnavailable") && run.stderr.contains("postgresql://tokens@"), "\(run.stderr)") }
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: workingDirectory).isEmpty)
        }
    }
}
