import Foundation
import TestSupport
import Testing
import TokenCachePostgreSQL
import TokenCacheStorage

@testable import TokenCache

/// The shared store on PostgreSQL as its users meet it: what the server holds (nothing readable), several hosts on
/// one schema, a schema of another version refused. The domain suites run on it too (``TestBackend/postgresql``).
@Suite(.enabled(if: PostgreSQLTestServer.url != nil, "needs the run's PostgreSQL server (make test starts one)"))
struct SharedStoreTests {
    /// Runs a client program of the server's (`psql`, `pg_dump`) on the run's database and returns what it printed.
    static func client(_ program: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program, "--dbname", PostgreSQLTestServer.url!] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else { throw StorageError(.ioFailure, "\(program) failed: \(text)") }
        return text
    }

    static func schema(of store: TestStore) throws -> String { try PostgreSQLAddress(parsing: store.sharedStoreURL!).schema }

    /// The canaries and the encodings a careless writer might use for them (PostgreSQL prints bytea as hex).
    static func forms(_ text: String) -> [String] {
        let data = Data(text.utf8)
        return [text, text.lowercased(), data.base64EncodedString(), data.map { String(format: "%02x", $0) }.joined()]
    }

    @Test func noCanaryReachesTheServerNorItsDump() throws {
        try TestStore.with(.postgresql) { store, cache in
            try LeakTests.putCanaries(cache)
            #expect(try cache.list(Account.self).records.first?.entity.username == Canary.username)
            let schema = try Self.schema(of: store)
            let rows = try Self.client("psql", ["--no-psqlrc", "--quiet", "--command", "COPY \"\(schema)\".records TO STDOUT"])
            let dump = try Self.client("pg_dump", ["--schema", schema])
            // Proves the dumps could show a canary: they hold the store's rows.
            #expect(rows.split(separator: "\n").count >= 5 && dump.contains("COPY \(schema).records"))
            for (name, text) in [("the records table", rows), ("pg_dump", dump)] {
                for canary in Canary.all {
                    for form in Self.forms(canary) { #expect(!text.contains(form), "\(name) contains a form of \(canary)") }
                }
            }
        }
    }

    @Test func twoHostsOnOneSchemaSeeEachOthersWrites() async throws {
        try await withTemporaryDirectoryAsync { root in
            let store = TestStore(root: root, backend: .postgresql)
            try KeyFile.create(at: store.keyFile)
            let first = try TokenStore.create(store.configuration)
            let second = try TokenStore.open(store.configuration)
            try first.write { try $0.put(Samples.account()) }
            #expect(try second.list(Account.self).records.map(\.entity) == [Samples.account()])
            // Both write at once through the async path: every write lands, whoever won each race.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, host) in [first, second, first, second].enumerated() {
                    group.addTask {
                        for round in 0..<5 {
                            // A user of its own per caller and round: 20 access tokens in the end, none replacing another.
                            let response = try PlannedWriteTests.response("\(index)-\(round)", uid: "user-\(index)-\(round)")
                            let context = try Responses.context(authority: "https://login.microsoftonline.com/\(User.utid)", now: ReferenceTime.now)
                            _ = try await host.ingestApplyingPlan(response, context: context)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try first.list(AccessToken.self).records.count == 20)
            #expect(try second.list(AccessToken.self).records.count == 20)
        }
    }

    @Test func aSchemaOfAnotherVersionIsRefused() throws {
        try withTemporaryDirectory { root in
            let store = TestStore(root: root, backend: .postgresql)
            try KeyFile.create(at: store.keyFile)
            _ = try TokenStore.create(store.configuration)
            _ = try Self.client("psql", ["--no-psqlrc", "--quiet", "--command", "UPDATE \"\(try Self.schema(of: store))\".schema_version SET version = 99"])
            let refusal = try #require(throws: TokenCacheError.self) { try TokenStore.open(store.configuration) }
            #expect(refusal.code == .unsupportedFormatVersion && refusal.message.contains("schema version 99"), "\(refusal)")
        }
    }

    @Test func anOpenOfAnEmptySchemaFindsNoStoreAndCreatesNothing() throws {
        try withTemporaryDirectory { root in
            let store = TestStore(root: root, backend: .postgresql)
            try KeyFile.create(at: store.keyFile)
            let refusal = try #require(throws: TokenCacheError.self) { try TokenStore.open(store.configuration) }
            #expect(refusal.code == .storeNotFound, "\(refusal)")
            let schemas = try Self.client("psql", ["--no-psqlrc", "--tuples-only", "--command", "SELECT count(*) FROM pg_namespace WHERE nspname = '\(try Self.schema(of: store))'"])
            #expect(schemas.trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        }
    }

    /// Lease times on a shared store are the server's: a host whose clock runs an hour ahead still sees another's
    /// lease as held, where on a directory (one machine, one clock) the caller's clock is the clock.
    @Test(arguments: [TestBackend.lmdb, .postgresql]) func aHostWhoseClockRunsAheadDoesNotTakeALeaseStillHeld(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let context = try Responses.context(authority: "https://login.microsoftonline.com/\(User.utid)", now: ReferenceTime.now)
            _ = try cache.ingest(try PlannedWriteTests.response("lease"), context: context)
            let refreshToken = try #require(try cache.list(RefreshToken.self).records.first)
            let system = Int64(Date().timeIntervalSince1970 * 1000)
            guard case .taken = try cache.takeRefreshLease(on: refreshToken, duration: .seconds(30), now: system) else {
                Issue.record("the first host did not get the lease")
                return
            }
            let ahead = try cache.takeRefreshLease(on: refreshToken, duration: .seconds(30), now: system + 3_600_000)
            switch (backend, ahead) {
            case (.postgresql, .held(let until)): #expect(until > system && until < system + 120_000)
            case (.lmdb, .taken): break
            default: Issue.record("\(backend): \(ahead)")
            }
        }
    }
}
