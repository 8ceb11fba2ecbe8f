import Foundation
import TestSupport
import Testing
import TokenCache
import TokenCachePostgreSQL

/// `cachetool status` and `cachetool copy` on a shared store, against the run's private server: what status counts
/// (rows, a lease held, a listener connected) is what is there, and it prints no secret; a copy down to a directory
/// and back up to a server answers as the source does, under the same key only.
@Suite(.enabled(if: PostgreSQLTestServer.url != nil, "needs the run's PostgreSQL server (make test starts one)"))
struct SharedStoreOperatorTests {
    static let passwordCanary = "PASSWORD-CANARY-7f3a"
    /// What sample-data stores that must never be printed: user names, a refresh token's secret, an object id.
    static let secrets = ["alice@contoso.example", "bob@contoso.example", "rt-family", "rt-alice", SampleDataIDs.aliceOID]

    enum SampleDataIDs {
        static let aliceOID = "1a2b3c4d-0000-4000-8000-a11ce0000001"
    }

    static func json(_ run: CacheToolRun) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.output)")
    }

    @Test func statusCountsRowsALeaseHeldAndAListenerAndPrintsNoSecret() throws {
        try CLIStore.with { store in
            // A password in the URL (the local server trusts the socket and never asks for it): it must not be shown.
            let url = try #require(PostgreSQLTestServer.uniqueStoreURL("status")) + "&password=" + Self.passwordCanary
            let environment = ["TOKEN_CACHE_KEY_FILE": store.keyFile, "TOKEN_CACHE_DIR": url, "TOKEN_CACHE_STORE_TIMEOUT": "15s"]
            func run(_ arguments: [String]) throws -> CacheToolRun { try CacheTool.run(arguments, environment: environment) }
            #expect(try run(["init"]).status == 0)
            #expect(try run(["sample-data", "--now", "\(CacheToolTests.now)"]).status == 0)

            let before = try Self.json(try run(["status", "--json"]))
            #expect(before["listeners"] as? Int == 0 && (before["leases"] as? [String: Any])?["held"] as? Int == 0, "\(before)")

            // This process: a host holding a lease on a refresh token, with its change listener connected.
            let configuration = try Configuration.sharedStore(url, keySource: .keyFile(path: store.keyFile), timeout: PostgreSQLTestServer.timeout)
            let cache = try TokenStore.open(configuration)
            let refreshToken = try #require(try cache.list(RefreshToken.self).records.first)
            guard case .taken = try cache.takeRefreshLease(on: refreshToken, duration: .seconds(300), now: Int64(Date().timeIntervalSince1970 * 1000)) else {
                Issue.record("no lease taken")
                return
            }
            _ = cache.lastCommitID  // starts the listener
            var status: [String: Any] = [:]
            let deadline = Date().addingTimeInterval(30)
            repeat {
                status = try Self.json(try run(["status", "--json"]))
                if status["listeners"] as? Int == 1 { break }
                Thread.sleep(forTimeInterval: 0.2)
            } while Date() < deadline
            #expect(status["listeners"] as? Int == 1, "\(status)")
            #expect((status["sessions"] as? Int ?? 0) >= 1, "\(status)")
            let rows = try #require(status["rows"] as? [String: Int], "\(status)")
            let info = try Self.json(try run(["info", "--json"]))
            let records = try #require(info["records"] as? [String: Int])
            #expect(rows["access_tokens"] == records["AccessToken"] && rows["accounts"] == records["Account"], "\(rows) \(records)")
            #expect(rows["refresh_tokens"] == 3 && rows["id_tokens"] == 3 && rows["app_metadata"] == 3, "\(rows)")
            // The header and the lease.
            #expect(rows["meta"] == 2 && status["lease_rows"] as? Int == 1, "\(status)")
            let leases = try #require(status["leases"] as? [String: Any], "\(status)")
            #expect(leases["held"] as? Int == 1 && leases["lapsed"] as? Int == 0, "\(leases)")
            let age = try #require(leases["oldest_held_age_seconds"] as? Int, "\(leases)")
            #expect(age >= 0 && age < 120, "\(leases)")
            #expect(status["schema_version"] as? Int == 2 && status["schema_known"] as? Bool == true, "\(status)")
            #expect((status["table_bytes"] as? Int ?? 0) > 0 && (status["index_bytes"] as? Int ?? 0) > 0, "\(status)")
            let skew = try #require(status["clock_skew_ms"] as? Int, "\(status)")
            #expect(abs(skew) < 5_000, "the same machine's clock is \(skew) ms off")
            #expect((status["notification_queue_usage"] as? Double).map { $0 >= 0 && $0 < 0.5 } == true, "\(status)")

            let text = try run(["status"])
            #expect(text.status == 0, "\(text.output)")
            #expect(text.stdout.contains("1 change listener connected") && text.stdout.contains("leases      1 held"), "\(text.output)")
            #expect(text.stdout.contains("schema      version 2; this build reads and writes it"), "\(text.output)")
            for run in [text, try run(["status", "--json"])] {
                for secret in Self.secrets + [Self.passwordCanary] { #expect(!run.output.contains(secret), "\(secret) in \(run.output)") }
            }
            withExtendedLifetime(cache) {}
        }
    }

    @Test func statusOfAnEmptySchemaShowsTheServerAndExits66() throws {
        let url = try #require(PostgreSQLTestServer.uniqueStoreURL("nostore"))
        try CLIStore.with { store in
            try KeyFile.create(at: store.keyFile)
            let run = try CacheTool.run(["status", "--store", url], environment: ["TOKEN_CACHE_KEY_FILE": store.keyFile, "TOKEN_CACHE_STORE_TIMEOUT": "15s"])
            #expect(run.status == 66 && run.stdout.contains("holds no store") && run.stdout.contains("server      PostgreSQL"), "\(run.output)")
        }
    }

    /// Tables of a version this build does not know: the server's part is shown, the leases are not read, exit 78.
    @Test func statusOfTablesOfAnotherVersionShowsThemAndExits78() throws {
        let base = try #require(PostgreSQLTestServer.url)
        let schema = PostgreSQLTestServer.uniqueSchemaName("newer")
        let url = base + "&schema=" + schema
        try CLIStore.with { store in
            let environment = ["TOKEN_CACHE_KEY_FILE": store.keyFile, "TOKEN_CACHE_STORE_TIMEOUT": "15s", "TOKEN_CACHE_DIR": url]
            #expect(try CacheTool.run(["init"], environment: environment).status == 0)
            let psql = Process()
            psql.executableURL = URL(fileURLWithPath: try #require(PostgreSQLTestServer.binDirectory) + "/psql")
            psql.arguments = ["--no-psqlrc", "--quiet", "--dbname", base, "--command", "UPDATE \(schema).schema_version SET version = 99"]
            try psql.run()
            psql.waitUntilExit()
            #expect(psql.terminationStatus == 0)
            let run = try CacheTool.run(["status"], environment: environment)
            #expect(run.status == 78, "\(run.output)")
            #expect(run.stdout.contains("schema      version 99; this build knows version 2 only") && run.stdout.contains("leases      not read"), "\(run.output)")
            let json = try Self.json(try CacheTool.run(["status", "--json"], environment: environment))
            #expect(json["schema_version"] as? Int == 99 && json["schema_known"] as? Bool == false && json["leases"] is NSNull, "\(json)")
        }
    }

    @Test func statusOfADirectoryShowsItsReadersAndLeases() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let run = try store.run(["status"])
            #expect(run.status == 0 && run.stdout.contains("readers ") && run.stdout.contains("leases      0 held"), "\(run.output)")
            let json = try Self.json(try store.run(["status", "--json"]))
            #expect(json["kind"] as? String == "directory" && (json["leases"] as? [String: Any])?["held"] as? Int == 0, "\(json)")
        }
    }

    /// The lines of `inspect --summary` and the JSON of `lookup`, without the store's location.
    static func answers(_ run: (_ arguments: [String]) throws -> CacheToolRun) throws -> [String] {
        let summary = try run(["inspect", "--summary"])
        #expect(summary.status == 0, "\(summary.output)")
        var answers = summary.stdout.split(separator: "\n").map(String.init).filter { !$0.contains("postgresql://") && !$0.contains("/store") }
        for (client, account, scopes) in [
            (LookupOutcomeTests.outlook, "alice@contoso.example", "User.Read"), (LookupOutcomeTests.teams, "bob@contoso.example", "Files.Read.All"),
            (LookupOutcomeTests.teams, "alice@contoso.example", "Mail.Send"),
        ] {
            let lookup = try run(
                ["lookup", "--client-id", client, "--account", account, "--authority", "https://login.microsoftonline.com/\(LookupOutcomeTests.tenant)",
                 "--scopes", scopes, "--now", "\(CacheToolTests.now)", "--json"]
            )
            #expect(lookup.status == 0, "\(lookup.output)")
            answers.append(lookup.stdout)
        }
        return answers
    }

    @Test func aCopyDownToADirectoryAndBackUpAnswersAsTheSourceUnderTheSameKeyOnly() throws {
        try CLIStore.with { store in
            let shared = try #require(PostgreSQLTestServer.uniqueStoreURL("copyfrom"))
            let back = try #require(PostgreSQLTestServer.uniqueStoreURL("copyto"))
            let base = ["TOKEN_CACHE_KEY_FILE": store.keyFile, "TOKEN_CACHE_STORE_TIMEOUT": "15s"]
            func at(_ location: String) -> (_ arguments: [String]) throws -> CacheToolRun {
                { arguments in try CacheTool.run(arguments, environment: base.merging(["TOKEN_CACHE_DIR": location]) { $1 }) }
            }
            #expect(try at(shared)(["init"]).status == 0)
            #expect(try at(shared)(["sample-data", "--now", "\(CacheToolTests.now)"]).status == 0)
            let source = try Self.answers(at(shared))
            #expect(source.contains { $0.contains("\"outcome\" : \"hit\"") || $0.contains("\"outcome\": \"hit\"") }, "\(source)")

            // Down: a directory the same key opens, answering as the server does.
            let down = try at(shared)(["copy", "--to", store.directory])
            #expect(down.status == 0 && down.stdout.contains("Copied 17 records"), "\(down.output)")
            #expect(try Self.answers(at(store.directory)) == source)
            let verified = try at(store.directory)(["verify"])
            #expect(verified.status == 0 && verified.stdout.contains("17 records verified, 0 problems"), "\(verified.output)")

            // Again into the same directory: refused unless told, and then replaced.
            let again = try at(shared)(["copy", "--to", store.directory])
            #expect(again.status == 64 && again.stderr.contains("already holds") && again.stderr.contains("--replace"), "\(again.output)")
            let replaced = try at(shared)(["copy", "--to", store.directory, "--replace", "--json"])
            #expect(replaced.status == 0, "\(replaced.output)")
            #expect(try Self.json(replaced)["replaced_records"] as? Int == 18, "\(replaced.output)")

            // Up: from the directory over another store in a schema (its own header and records), replaced whole.
            #expect(try at(back)(["init"]).status == 0)
            #expect(try at(back)(["sample-data", "--now", "\(CacheToolTests.now - 86_400)"]).status == 0)
            let refusedUp = try at(store.directory)(["copy", "--to", back])
            #expect(refusedUp.status == 64 && refusedUp.stderr.contains("already holds 18 records"), "\(refusedUp.output)")
            let up = try at(store.directory)(["copy", "--to", back, "--replace"])
            #expect(up.status == 0 && up.stdout.contains("Copied 17 records"), "\(up.output)")
            #expect(try Self.answers(at(back)) == source)
            let verifiedUp = try at(back)(["verify"])
            #expect(verifiedUp.status == 0 && verifiedUp.stdout.contains("17 records verified, 0 problems"), "\(verifiedUp.output)")

            // Another key opens neither the source nor the copies.
            let otherKey = store.root + "/other-key"
            try KeyFile.create(at: otherKey)
            for location in [shared, store.directory, back] {
                let refused = try CacheTool.run(["inspect", "--summary"], environment: base.merging(["TOKEN_CACHE_DIR": location, "TOKEN_CACHE_KEY_FILE": otherKey]) { $1 })
                #expect(refused.status == 77, "\(location): \(refused.output)")
            }
            let wrongKeyCopy = try CacheTool.run(
                ["copy", "--to", store.root + "/never"], environment: base.merging(["TOKEN_CACHE_DIR": shared, "TOKEN_CACHE_KEY_FILE": otherKey]) { $1 }
            )
            #expect(wrongKeyCopy.status == 77 && !FileManager.default.fileExists(atPath: store.root + "/never"), "\(wrongKeyCopy.output)")
            // The store itself is no destination.
            let itself = try at(shared)(["copy", "--to", shared])
            #expect(itself.status == 64 && itself.stderr.contains("is the store itself"), "\(itself.output)")
        }
    }
}
