import Foundation
import TestSupport
import Testing
import TokenCacheRecords
import TokenCacheStorage
import TokenCacheOperations

@testable import TokenCache

/// A host of a shared store refuses a row the server hands back older than one it already read (FORMAT.md §2.2,
/// "Rollback"), and takes a record deleted and written again for what it is, not for a rollback.
@Suite(.enabled(if: PostgreSQLTestServer.url != nil, "needs the run's PostgreSQL server (make test starts one)"))
struct RollbackDetectionTests {
    /// The value of the one record of `space` in the store's table, as hex.
    static func storedValue(space: KeySpace, of store: TestStore) throws -> String {
        let schema = try SharedStoreTests.schema(of: store)
        let output = try SharedStoreTests.client(
            "psql", ["--no-psqlrc", "--tuples-only", "--no-align", "--command", "SELECT encode(value, 'hex') FROM \"\(schema)\".records WHERE space = \(space.rawValue)"]
        )
        let values = output.split(separator: "\n").map(String.init)
        try #require(values.count == 1, "expected one record of \(space.name), found \(values.count)")
        return values[0]
    }

    /// Puts `hex` back as the value of the one record of `space`: what a server that rolls a row back does.
    static func rollBack(space: KeySpace, of store: TestStore, to hex: String) throws {
        let schema = try SharedStoreTests.schema(of: store)
        _ = try SharedStoreTests.client(
            "psql", ["--no-psqlrc", "--quiet", "--command", "UPDATE \"\(schema)\".records SET value = decode('\(hex)', 'hex') WHERE space = \(space.rawValue)"]
        )
    }

    static func query(now: Int64 = Samples.now) -> SilentLookupQuery {
        SilentLookupQuery(
            clientID: Samples.client, homeAccountID: Samples.home, environment: Samples.environment, realm: "utid1",
            scopes: ["User.Read"], now: now
        )
    }

    static func withTwoHosts(_ body: (TestStore, _ writer: TokenStore, _ reader: TokenStore) throws -> Void) throws {
        try withTemporaryDirectory { root in
            let store = TestStore(root: root, backend: .postgresql)
            try KeyFile.create(at: store.keyFile)
            let writer = try TokenStore.create(store.configuration)
            let reader = try TokenStore.open(store.configuration)
            try body(store, writer, reader)
        }
    }

    @Test func aHostRefusesAnAccessTokenTheServerRolledBack() throws {
        try Self.withTwoHosts { store, writer, reader in
            try writer.write { try $0.put(Samples.accessToken(secret: "first-token")) }
            #expect(try reader.silentLookup(Self.query()).accessToken?.entity.secret == Secret("first-token"))
            let older = try Self.storedValue(space: .accessTokens, of: store)
            try writer.write { try $0.put(Samples.accessToken(secret: "second-token")) }
            #expect(try reader.silentLookup(Self.query()).accessToken?.entity.secret == Secret("second-token"))

            try Self.rollBack(space: .accessTokens, of: store, to: older)
            // The reader read the second: the first, handed back, is refused and never served.
            #expect(try reader.silentLookup(Self.query()).accessToken == nil)
            let listed = try reader.list(AccessToken.self)
            #expect(listed.records.isEmpty)
            #expect(listed.corrupt.count == 1)
            #expect(listed.corrupt.first?.reason.contains("rolled back") == true, "\(listed.corrupt)")
            // A host that never read the newer revision cannot tell (FORMAT.md says so): it serves the older one.
            let newcomer = try TokenStore.open(store.configuration)
            #expect(try newcomer.silentLookup(Self.query()).accessToken?.entity.secret == Secret("first-token"))
        }
    }

    @Test func aHostRefusesAnAccountTheServerRolledBackThroughEveryRead() throws {
        try Self.withTwoHosts { store, writer, reader in
            try writer.write { try $0.put(Samples.account(username: "before@example.com")) }
            let older = try Self.storedValue(space: .accounts, of: store)
            try writer.write { try $0.put(Samples.account(username: "after@example.com")) }
            #expect(try reader.list(Account.self).records.map(\.entity.username) == ["after@example.com"])
            try Self.rollBack(space: .accounts, of: store, to: older)
            #expect(try reader.list(Account.self).records.isEmpty)
            #expect(try reader.snapshot().corrupt.map(\.reason).contains { $0.contains("rolled back") })
            // A write over it continues above what the host saw, so the host reads its own write again.
            try reader.write { try $0.put(Samples.account(username: "healed@example.com")) }
            #expect(try reader.list(Account.self).records.map(\.entity.username) == ["healed@example.com"])
            #expect(try writer.list(Account.self).records.map(\.entity.username) == ["healed@example.com"])
        }
    }

    @Test func aRecordDeletedAndWrittenAgainIsNoRollback() async throws {
        try await withTemporaryDirectoryAsync { root in
            let store = TestStore(root: root, backend: .postgresql)
            try KeyFile.create(at: store.keyFile)
            let writer = try TokenStore.create(store.configuration)
            let reader = try TokenStore.open(store.configuration)
            // Rewritten a few times, so that a record written again from revision 1 would sit below what the reader saw.
            for name in ["a", "b", "c"] { try writer.write { try $0.put(Samples.account(username: "\(name)@example.com")) } }
            let seen = try #require(try reader.list(Account.self).records.first).revision
            #expect(seen >= 3)
            try writer.write { try $0.delete(Samples.account().key) }
            #expect(try reader.list(Account.self).records.isEmpty)
            // Written again through a write transaction, then through a planned write (the async path).
            try writer.write { try $0.put(Samples.account(username: "again@example.com")) }
            let again = try #require(try reader.list(Account.self).records.first)
            #expect(again.entity.username == "again@example.com" && again.revision > seen)
            try writer.write { try $0.delete(Samples.account().key) }
            _ = try await writer.writeApplyingPlan(reading: Self.plan(for: Samples.account(), in: writer)) { try $0.put(Samples.account(username: "planned@example.com")) }
            let planned = try #require(try reader.list(Account.self).records.first)
            #expect(planned.entity.username == "planned@example.com" && planned.revision > again.revision)
            #expect(try reader.list(Account.self).corrupt.isEmpty)
        }
    }

    @Test func aCopyFromADirectoryRaisesTheFloorPastTheRevisionsItBrings() throws {
        try withTemporaryDirectory { root in
            let local = TestStore(root: root, backend: .lmdb)
            try KeyFile.create(at: local.keyFile)
            let directory = try TokenStore.create(local.configuration)
            // Rewritten far past the few numbers a fresh schema's sequence draws for the copied rows.
            for round in 0..<40 { try directory.write { try $0.put(Samples.account(username: "u\(round)@example.com")) } }
            let shared = TestStore(root: root, backend: .postgresql)  // the same key file
            _ = try directory.copy(to: shared.configuration)
            let writer = try TokenStore.open(shared.configuration)
            let reader = try TokenStore.open(shared.configuration)
            let copied = try #require(try reader.list(Account.self).records.first).revision
            #expect(copied == 40)
            try writer.write { try $0.delete(Samples.account().key) }
            try writer.write { try $0.put(Samples.account(username: "again@example.com")) }
            let again = try reader.list(Account.self)
            #expect(again.corrupt.isEmpty)
            #expect(again.records.first.map { $0.revision > copied } == true)
        }
    }

    /// A plan that fetches the account's record: what a planned put of it reads.
    static func plan(for account: Account, in store: TokenStore) -> ReadPlan {
        var plan = ReadPlan()
        plan.add(.accounts, key: Account.storageKey(for: account.key, index: store.store.keyring.index))
        return plan
    }

    @Test func marksRiseOnlyFromCommittedReadsAndSkipMeta() throws {
        let marks = RevisionMarks()
        let key: [UInt8] = [1, 2, 3]
        try key.withUnsafeBytes { key in
            // A write transaction's read (its own write, maybe rolled back later) raises nothing.
            try RevisionMarks.writing { try marks.check(9, space: .accessTokens, key: key) }
            #expect(marks.count == 0)
            try RevisionMarks.readingCommitted { try marks.check(5, space: .accessTokens, key: key) }
            #expect(marks.count == 1)
            try RevisionMarks.readingCommitted { try marks.check(5, space: .accessTokens, key: key) }
            #expect(throws: FormatError.self) { try RevisionMarks.writing { try marks.check(4, space: .accessTokens, key: key) } }
            #expect(throws: FormatError.self) { try RevisionMarks.readingCommitted { try marks.check(4, space: .accessTokens, key: key) } }
            // Another space, and `meta` (rewritten at revision 1 by design), are not this key's.
            try RevisionMarks.readingCommitted { try marks.check(1, space: .refreshTokens, key: key) }
            try RevisionMarks.readingCommitted {
                try marks.check(7, space: .meta, key: key)
                try marks.check(1, space: .meta, key: key)
            }
            #expect(marks.count == 2)
        }
    }
}
