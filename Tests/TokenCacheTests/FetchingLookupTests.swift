import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TokenCache
import TokenCacheRecords
@testable import TokenCacheStorage

/// The lookup's async path (``TokenStore/fetchingSilentLookup(_:)``): every range a lookup may read is named by its
/// plan and fetched in one call, and the judgement over what was fetched answers exactly as the synchronous lookup
/// does. A backend that counts its calls stands in for one across a network.
@Suite struct FetchingLookupTests {
    /// An in-memory backend that serves plans asynchronously and counts its calls: a fetch is a round trip; a read
    /// transaction is what a fetching lookup must never need.
    final class RoundTripCountingBackend: RecordBackend, RangeFetching, WritePlanApplying {
        let inner: InMemoryRecordBackend
        let fetches = Atomic<Int>(0)
        let reads = Atomic<Int>(0)
        let applies = Atomic<Int>(0)
        let writes = Atomic<Int>(0)
        /// Runs before each apply, as another host's write landing between a fetch and an apply would.
        let beforeApply = Mutex<(@Sendable () throws -> Void)?>(nil)

        func apply(_ plan: WritePlan) async throws -> WritePlanOutcome {
            applies.add(1, ordering: .relaxed)
            await Task.yield()
            if let interference = beforeApply.withLock({ $0 }) { try interference() }
            return try inner.applySynchronously(plan)
        }

        init(name: String) { inner = InMemoryRecordBackend(name: name) }

        func fetch(_ plan: ReadPlan) async throws -> FetchedRecords {
            fetches.add(1, ordering: .relaxed)
            await Task.yield()  // a network backend suspends here; the caller's thread is free meanwhile
            return try inner.fetchSynchronously(plan)
        }

        func fetchBlocking(_ plan: ReadPlan) throws -> FetchedRecords {
            fetches.add(1, ordering: .relaxed)
            return try inner.fetchSynchronously(plan)
        }

        func read<R>(_ body: (any RecordReading) throws -> R) throws -> R {
            reads.add(1, ordering: .relaxed)
            return try inner.read(body)
        }

        func write<R>(freeingSpace: Bool, _ body: (any RecordWriting) throws -> R) throws -> R {
            writes.add(1, ordering: .relaxed)
            return try inner.write(freeingSpace: freeingSpace, body)
        }
        var location: String { inner.location }
        var lonePlacement: LonePlacement { inner.lonePlacement }
        func usage() -> StorageUsage { inner.usage() }
        var lastCommitID: Int { inner.lastCommitID }
        func statistics() throws -> StorageStatistics { try inner.statistics() }
        func integrityProblem() throws -> String? { try inner.integrityProblem() }
    }

    /// Where a store on the counting backend lives: its one backend, which the store opens when it is created.
    struct RoundTripCountingLocation: StorageLocation {
        let backend = RoundTripCountingBackend(name: Configuration.inMemoryDirectory)
        var location: String { Configuration.inMemoryDirectory }
        var kind: String { "round-trip-counting" }
        var directory: String? { nil }
        var files: [StoreFile] { [] }
        func holdsStore() -> Bool { false }
        func sizeAtRest() -> Int? { nil }
        func relocated(to location: String) -> any StorageLocation { RoundTripCountingLocation() }
        func open(readOnly: Bool, create: Bool) throws(StorageError) -> any RecordBackend { backend }
    }

    /// The stores a comparison runs on: the two real backends and the counting one.
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case lmdb, memory, counting
        var testDescription: String { rawValue }
    }

    static func withStore(_ backend: Backend, _ body: (TokenStore, RoundTripCountingBackend?) async throws -> Void) async throws {
        try await withTemporaryDirectoryAsync { root in
            switch backend {
            case .lmdb:
                try KeyFile.create(at: root + "/key")
                try await body(try TokenStore.create(Configuration(directory: root + "/store", keySource: .keyFile(path: root + "/key"))), nil)
            case .memory:
                try await body(try TokenStore.create(.inMemory()), nil)
            case .counting:
                var configuration = Configuration.inMemory()
                let location = RoundTripCountingLocation()
                configuration.storageLocation = location
                let store = try TokenStore.create(configuration)
                try await body(store, location.backend)
            }
        }
    }

    // MARK: A population with every shape a lookup meets

    static let hosts = ["login.microsoftonline.com", "login.windows.net", "login.microsoft.com", "login.partner.example"]
    static let clients = ["client-a", "client-b", "client-c"]
    static let realms = ["home-tenant", "guest-tenant", "organizations"]
    static let scopes = ["User.Read", "Mail.Read", "Files.Read User.Read", "Calendars.Read Mail.Read", "https://graph.example/.default"]
    static let now: Int64 = 1_800_000_000

    static func home(_ account: Int) -> String { "uid-\(account).home-tenant" }

    /// Accounts with access tokens of several hosts, realms, scopes and expiry states (some in one bucket), refresh
    /// tokens of clients and of a family, ID tokens, profiles, app metadata with and without a family, a refused
    /// refresh token and a damaged record: deterministic, from `seed`.
    static func populate(_ store: TokenStore, seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        try store.write { writer in
            for (index, client) in clients.enumerated() where index != 2 {
                try writer.put(AppMetadata(clientID: client, environment: pick(hosts), familyID: index == 0 ? "1" : nil))
            }
            for account in 0..<6 {
                for _ in 0..<8 {
                    let expiresOn = pick([now - 60, now + 100, now + 3_600, now + 86_400])
                    try writer.put(
                        AccessToken(
                            homeAccountID: home(account), environment: pick(hosts), clientID: pick(clients), realm: pick(realms),
                            target: pick(scopes), secret: Secret("at-\(random.next() % 1_000_000)"), cachedAt: now - 300,
                            expiresOn: expiresOn, refreshOn: random.next() % 3 == 0 ? now - 10 : nil
                        ))
                }
                if account % 3 != 2 {
                    try writer.put(
                        RefreshToken(
                            homeAccountID: home(account), environment: pick(hosts), clientID: pick(clients), secret: Secret("rt-\(account)"),
                            familyID: account % 2 == 0 ? "1" : nil, lastModificationTime: now - Int64(account)
                        ))
                }
                for realm in realms.prefix(2) where random.next() % 2 == 0 {
                    let host = pick(hosts)
                    try writer.put(
                        Account(
                            homeAccountID: home(account), environment: host, realm: realm, localAccountID: "local-\(account)",
                            username: "user\(account)@example.com", authorityType: "MSSTS"
                        ))
                    try writer.put(
                        IDToken(homeAccountID: home(account), environment: host, clientID: pick(clients), realm: realm, secret: Secret("id-\(account)")))
                }
            }
        }
        // A refused refresh token: offered to no one (FORMAT.md §5.7).
        if let refused = try store.list(RefreshToken.self).records.first {
            if case .taken(let lease) = try store.takeRefreshLease(on: refused, duration: .seconds(30), now: now * 1000) {
                try store.recordRefusedRedemption(lease, of: refused, now: now * 1000)
            }
        }
    }

    static func queries(seed: UInt64, count: Int) -> [SilentLookupQuery] {
        var random = SplitMix64(seed: seed ^ 0x5EED)
        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        return (0..<count).map { _ in
            SilentLookupQuery(
                clientID: pick(clients), homeAccountID: home(Int(random.next() % 7)), environment: pick(hosts),
                realm: pick(realms + ["common", "consumers"]), scopes: pick(scopes).split(separator: " ").map(String.init),
                now: now + pick([0, 200, 4_000]), companionLoading: .withLookup
            )
        }
    }

    /// What a caller can see of a result, compared whole.
    static func summary(_ result: SilentLookupResult) throws -> String {
        func describe<E>(_ stored: StoredEntity<E>?) -> String { stored.map { "\($0.entity)@\($0.revision)" } ?? "none" }
        return [
            result.outcome.rawValue, "\(result.refreshRecommended)", describe(result.accessToken), describe(try result.refreshToken),
            describe(try result.idToken), describe(try result.account), try result.familyMembership.rawValue,
            try result.corrupt.map(\.description).sorted().joined(separator: ","),
        ].joined(separator: " | ")
    }

    // MARK: Tests

    @Test(arguments: Backend.allCases) func theFetchedLookupAnswersAsTheSynchronousOne(backend: Backend) async throws {
        try await Self.withStore(backend) { store, _ in
            try Self.populate(store, seed: 7)
            var outcomes: [SilentLookupResult.Outcome: Int] = [:]
            for query in Self.queries(seed: 7, count: 300) {
                let synchronous = try store.silentLookup(query)
                let fetched = try await store.fetchingSilentLookup(query)
                #expect(try Self.summary(fetched) == Self.summary(synchronous), "\(query.clientID) \(query.realm) \(query.scopes)")
                #expect(fetched.snapshotID == synchronous.snapshotID)
                outcomes[synchronous.outcome, default: 0] += 1
            }
            // The comparison covered every outcome, not only misses.
            #expect(outcomes.count == 3, "\(outcomes)")
        }
    }

    @Test func aLookupIsOneRoundTripAndNoReadTransaction() async throws {
        try await Self.withStore(.counting) { store, backend in
            let backend = try #require(backend)
            try Self.populate(store, seed: 11)
            for query in Self.queries(seed: 11, count: 50) {
                let fetchesBefore = backend.fetches.load(ordering: .relaxed)
                let readsBefore = backend.reads.load(ordering: .relaxed)
                let result = try await store.fetchingSilentLookup(query)
                _ = try Self.summary(result)  // companions included: loaded, not read later
                #expect(backend.fetches.load(ordering: .relaxed) - fetchesBefore == 1)
                #expect(backend.reads.load(ordering: .relaxed) == readsBefore)
                // The synchronous lookup on a backend that reads by plan (a server) is one round trip too.
                _ = try Self.summary(try store.silentLookup(query))
                #expect(backend.fetches.load(ordering: .relaxed) - fetchesBefore == 2)
                #expect(backend.reads.load(ordering: .relaxed) == readsBefore)
            }
        }
    }

    @Test func aReadOutsideTheFetchedRangesIsRefused() throws {
        try TestStore.with(.memory) { _, store in
            var plan = ReadPlan()
            plan.add(KeySpace.accounts, prefix: [1, 2])
            let reader = FetchedRecordReader(try store.store.backend.fetchSynchronously(plan))
            #expect(throws: StorageError.self) { try reader.forEach(in: KeySpace.accounts, prefix: [1]) { _, _ in true } }
            #expect(throws: StorageError.self) { try reader.withValue(in: KeySpace.idTokens, forKey: [1, 2, 3]) { _ in () } }
            #expect(try reader.withValue(in: KeySpace.accounts, forKey: [1, 2, 3]) { _ in () } == nil)
        }
    }
}
