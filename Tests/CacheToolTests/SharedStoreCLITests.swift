import Foundation
import TestSupport
import Testing

/// cachetool on a shared store: every verb a user runs on a directory, given a `postgresql://` URL instead
/// (`--store` or `TOKEN_CACHE_DIR`), against the run's private server.
@Suite(.enabled(if: PostgreSQLTestServer.url != nil, "needs the run's PostgreSQL server (make test starts one)"))
struct SharedStoreCLITests {
    @Test func aStoreMadeByInitServesTheVerbsAndMovesOutAndIn() throws {
        try CLIStore.with { store in
            let url = try #require(PostgreSQLTestServer.uniqueStoreURL("cli"))
            func run(_ arguments: [String], _ environment: [String: String] = [:]) throws -> CacheToolRun {
                try CacheTool.run(arguments, environment: ["TOKEN_CACHE_KEY_FILE": store.keyFile, "TOKEN_CACHE_DIR": url, "TOKEN_CACHE_STORE_TIMEOUT": "15s"].merging(environment) { $1 })
            }
            let created = try run(["init"])
            #expect(created.status == 0 && created.stdout.contains("Created store postgresql://"), "\(created.output)")
            let again = try run(["init"])
            #expect(again.status == 0 && again.stdout.contains("already exists and opens with key file"), "\(again.output)")
            #expect(try run(["sample-data"]).status == 0)
            let verified = try run(["verify"])
            #expect(verified.status == 0 && verified.stdout.contains("17 records verified, 0 problems"), "\(verified.output)")
            let summary = try run(["inspect", "--summary", "--store", url])
            #expect(summary.status == 0 && summary.stdout.contains("17 records"), "\(summary.output)")
            let info = try run(["info"])
            #expect(info.status == 0 && info.stdout.contains("on the server") && !info.stdout.contains("map grows"), "\(info.output)")
            #expect(try run(["stats"]).status == 0)
            #expect(try run(["accounts"]).status == 0)
            // Out to MSAL's format, and into a directory store with the same key: the same records.
            let exported = store.root + "/export.json"
            #expect(try run(["export", "-o", exported]).status == 0)
            #expect(try run(["init"], ["TOKEN_CACHE_DIR": store.directory]).status == 0)
            let local = try run(["import", exported], ["TOKEN_CACHE_DIR": store.directory])
            #expect(local.status == 0, "\(local.output)")
            let localSummary = try run(["inspect", "--summary"], ["TOKEN_CACHE_DIR": store.directory])
            #expect(localSummary.stdout.contains("access token"), "\(localSummary.output)")
            let refused = try run(["compact"])
            #expect(refused.status == 78 && refused.stderr.contains("does not support compaction"), "\(refused.output)")
        }
    }

    /// The longest schema name allowed (51 bytes) still makes a notification channel PostgreSQL takes: writes succeed.
    @Test func aStoreInASchemaOfTheLongestNameAllowedIsWritten() throws {
        let base = try #require(PostgreSQLTestServer.url)
        let name = PostgreSQLTestServer.uniqueSchemaName("longest")
        let schema = name + String(repeating: "x", count: 51 - name.utf8.count)
        try CLIStore.with { store in
            let environment = ["TOKEN_CACHE_KEY_FILE": store.keyFile, "TOKEN_CACHE_DIR": base + "&schema=" + schema, "TOKEN_CACHE_STORE_TIMEOUT": "15s"]
            #expect(try CacheTool.run(["init"], environment: environment).status == 0)
            let written = try CacheTool.run(["sample-data"], environment: environment)
            #expect(written.status == 0, "\(written.output)")
        }
    }
}
