import Foundation
import Synchronization
import TestSupport
import Testing
import TokenCacheOperations

@testable import TokenCache
import TokenCacheRecords
@testable import TokenCacheStorage

/// The write half of the seam's async path (``TokenStore/ingestApplyingPlan(_:context:)``): an ingest names what it
/// reads, decides on one fetch, and hands the backend its changes in one call, applied only if nothing it read changed.
/// It must write what the transaction writes, in one fetch and one apply, decide again when another writer got in
/// between, and never apply a decision made on stale records.
@Suite struct PlannedWriteTests {
    typealias Backend = FetchingLookupTests.Backend
    typealias CountingBackend = FetchingLookupTests.RoundTripCountingBackend

    static let now = ReferenceTime.now

    /// A response for user `uid` (of User's tenant), with `scope` and secrets named after `tag`.
    static func response(_ tag: String, uid: String = User.uid, scope: String = "User.Read openid profile", foci: String? = nil) throws -> TokenResponse {
        try TokenResponse(
            json: Responses.json(
                accessToken: "at-\(tag)", scope: scope, refreshToken: "rt-\(tag)", idToken: Responses.idToken(oid: uid),
                clientInfo: Responses.clientInfo(uid: uid), foci: foci
            ))
    }

    /// The responses of a sign-in's life: a first sign-in, a token of other scopes in the same bucket, one whose scopes
    /// intersect the first's (intersect-delete), a family refresh token, a second user, a token of the first again.
    static func responses() throws -> [(TokenResponse, TokenRequestContext)] {
        let tenant = "https://login.microsoftonline.com/\(User.utid)"
        return [
            (try response("1"), try Responses.context(authority: tenant, now: now)),
            (try response("2", scope: "Mail.Read"), try Responses.context(authority: tenant, scopes: ["Mail.Read"], now: now + 10)),
            (try response("3", scope: "User.Read Files.Read"), try Responses.context(authority: tenant, now: now + 20)),
            (try response("4", foci: "1"), try Responses.context(authority: tenant, now: now + 30)),
            (try response("5", uid: "another-user"), try Responses.context(authority: tenant, now: now + 40)),
            (try response("6"), try Responses.context(authority: tenant, now: now + 4_000)),
        ]
    }

    /// Every record of the store, decrypted, with its revision and time: what two stores that took the same writes
    /// must agree on (their sealed bytes differ by nonce and key).
    static func contents(_ store: TokenStore) throws -> [String] {
        func lines<E: CacheEntity>(_ type: E.Type, secret: (E) -> String?) throws -> [String] {
            try store.list(type).records.map { "\(E.kind) \($0.entity) \(secret($0.entity) ?? "") r\($0.revision)" }
        }
        return try (lines(AccessToken.self) { $0.secret.reveal() } + lines(RefreshToken.self) { $0.secret.reveal() }
            + lines(IDToken.self) { $0.secret.reveal() } + lines(Account.self) { _ in nil } + lines(AppMetadata.self) { _ in nil }).sorted()
    }

    /// Expired access tokens of other accounts, for the ingests' sweep to find. Fewer than a sweep reads in all, so
    /// that every sweep sees every token, whatever order the store's keys put them in.
    static func addExpiredTokens(_ store: TokenStore) throws {
        try store.write { writer in
            for index in 0..<4 {
                try writer.put(
                    AccessToken(
                        homeAccountID: "expired-\(index).\(User.utid)", environment: User.cloud, clientID: User.client, realm: User.utid,
                        target: "User.Read", secret: Secret("old-\(index)"), cachedAt: now - 7_200, expiresOn: now - 3_600 + Int64(index)
                    ))
            }
        }
    }

    /// Every ingest carries its client's app metadata; unchanged, it is left as it is (no seal, no put, and no
    /// collision between concurrent ingests of one client), and a change (a family joined) is written.
    @Test(arguments: TestBackend.allCases)
    func anIngestLeavesUnchangedAppMetadataAsItIs(backend: TestBackend) async throws {
        try await withTemporaryDirectoryAsync { root in
            let test = TestStore(root: root, backend: backend)
            try KeyFile.create(at: test.keyFile)
            let store = try TokenStore.create(test.configuration)
            let tenant = "https://login.microsoftonline.com/\(User.utid)"
            func revision() throws -> UInt64? { try store.list(AppMetadata.self).records.first?.revision }
            _ = try store.ingest(try Self.response("1"), context: try Responses.context(authority: tenant, now: Self.now))
            let first = try #require(try revision())
            #expect(backend.isFirst(first))
            _ = try store.ingest(try Self.response("2"), context: try Responses.context(authority: tenant, now: Self.now + 10))
            _ = try await store.ingestApplyingPlan(try Self.response("3"), context: try Responses.context(authority: tenant, now: Self.now + 20))
            #expect(try revision() == first)
            _ = try store.ingest(try Self.response("4", foci: "1"), context: try Responses.context(authority: tenant, now: Self.now + 30))
            #expect(try revision() == first + 1)
            #expect(try store.list(AppMetadata.self).records.first?.entity.familyID == "1")
        }
    }

    @Test(arguments: Backend.allCases)
    func aPlannedIngestWritesWhatTheTransactionWrites(_ backend: Backend) async throws {
        try await FetchingLookupTests.withStore(backend) { planned, _ in
            try await FetchingLookupTests.withStore(backend) { direct, _ in
                try Self.addExpiredTokens(planned)
                try Self.addExpiredTokens(direct)
                var swept = 0
                for (response, context) in try Self.responses() {
                    let viaPlan = try await planned.ingestApplyingPlan(response, context: context)
                    let viaTransaction = try direct.ingest(response, context: context)
                    #expect(viaPlan.accessTokenRevision == viaTransaction.accessTokenRevision)
                    #expect(viaPlan.refreshTokenRevision == viaTransaction.refreshTokenRevision)
                    #expect(viaPlan.accessTokensRemoved == viaTransaction.accessTokensRemoved)
                    #expect(viaPlan.expiredAccessTokensSwept == viaTransaction.expiredAccessTokensSwept)
                    swept += viaPlan.expiredAccessTokensSwept
                    #expect(try Self.contents(planned) == Self.contents(direct))
                }
                // The sequence exercised what it is meant to: the sweep removed the four expired tokens, and the last
                // response's, an hour later, the second user's too.
                #expect(swept == 5)
            }
        }
    }

    @Test func aPlannedIngestIsOneFetchAndOneApply() async throws {
        try await FetchingLookupTests.withStore(.counting) { store, counting in
            let counting = try #require(counting)
            try Self.addExpiredTokens(store)
            for (response, context) in try Self.responses() {
                let before = (counting.fetches.load(ordering: .relaxed), counting.applies.load(ordering: .relaxed))
                let (reads, writes) = (counting.reads.load(ordering: .relaxed), counting.writes.load(ordering: .relaxed))
                try await store.ingestApplyingPlan(response, context: context)
                #expect(counting.fetches.load(ordering: .relaxed) - before.0 == 1)
                #expect(counting.applies.load(ordering: .relaxed) - before.1 == 1)
                #expect(counting.reads.load(ordering: .relaxed) == reads)
                #expect(counting.writes.load(ordering: .relaxed) == writes)
            }
        }
    }

    /// Another writer changes the bucket between the fetch and the apply: the first apply is refused, the ingest
    /// decides again on the new records, and the result is what the two writes in that order give.
    @Test func aWriteBetweenFetchAndApplyMakesTheIngestDecideAgain() async throws {
        try await FetchingLookupTests.withStore(.counting) { store, counting in
            let counting = try #require(counting)
            let tenant = "https://login.microsoftonline.com/\(User.utid)"
            try store.ingest(try Self.response("first"), context: try Responses.context(authority: tenant, now: Self.now))
            let interfered = Atomic<Bool>(false)
            let other = try Self.response("other")
            let otherContext = try Responses.context(authority: tenant, now: Self.now + 5)
            counting.beforeApply.withLock {
                $0 = {
                    guard !interfered.exchange(true, ordering: .relaxed) else { return }
                    try store.ingest(other, context: otherContext)
                }
            }
            let fetches = counting.fetches.load(ordering: .relaxed)
            let result = try await store.ingestApplyingPlan(
                try Self.response("planned"), context: try Responses.context(authority: tenant, now: Self.now + 10)
            )
            #expect(counting.fetches.load(ordering: .relaxed) - fetches == 2)
            // Decided on the other writer's token: it replaced it, continuing its revision (first 1, other 2).
            #expect(result.accessTokensRemoved == 1)
            let tokens = try store.list(AccessToken.self).records
            #expect(tokens.map { $0.entity.secret.reveal() } == ["at-planned"])
            #expect(tokens.first?.revision == 3)
            #expect(try store.list(RefreshToken.self).records.map { $0.entity.secret.reveal() } == ["rt-planned"])
        }
    }

    /// Other writers win every race between fetch and apply: after ``TokenStore/plannedWriteAttempts`` lost applies the
    /// ingest runs as a transaction, which waits its turn, so that a busy store never loses a fresh token.
    @Test func anIngestThatKeepsLosingRunsAsATransaction() async throws {
        try await FetchingLookupTests.withStore(.counting) { store, counting in
            let counting = try #require(counting)
            let tenant = "https://login.microsoftonline.com/\(User.utid)"
            let round = Atomic<Int>(0)
            counting.beforeApply.withLock {
                $0 = {
                    let tag = round.add(1, ordering: .relaxed).newValue
                    try store.ingest(try Self.response("other-\(tag)"), context: try Responses.context(authority: tenant, now: Self.now + Int64(tag)))
                }
            }
            let writes = counting.writes.load(ordering: .relaxed)
            let result = try await store.ingestApplyingPlan(
                try Self.response("planned"), context: try Responses.context(authority: tenant, now: Self.now + 100)
            )
            #expect(counting.applies.load(ordering: .relaxed) == TokenStore.plannedWriteAttempts)
            // The others' eight ingests, then this one's transaction.
            #expect(counting.writes.load(ordering: .relaxed) - writes == TokenStore.plannedWriteAttempts + 1)
            #expect(result.accessTokenRevision == UInt64(TokenStore.plannedWriteAttempts) + 1)
            #expect(try store.list(AccessToken.self).records.map { $0.entity.secret.reveal() } == ["at-planned"])
        }
    }

    /// A seal that failed poisons a planned write as it poisons a transaction, even when the flow caught the error.
    @Test func aCaughtFillFailureIsNotForgotten() throws {
        let backend = InMemoryRecordBackend(name: Configuration.inMemoryDirectory)
        var readPlan = ReadPlan()
        readPlan.add(.accounts, prefix: [1])
        let write = try PlannedWrite(try backend.fetchSynchronously(readPlan))
        struct SealFailed: Error {}
        _ = try? write.put(in: .accounts, key: [1, 1], reservingCount: 4) { _ in throw SealFailed() }
        try [UInt8]([2]).withUnsafeBytes { try write.put(in: .accounts, key: [1, 2], value: $0) }
        #expect(write.failure is SealFailed)
    }

    /// A store without an access-token cap never counts its access tokens for an ingest (on a server, a count reads
    /// every row of the key space); once it has a cap, the ingest's one fetch counts them too.
    @Test(arguments: TestBackend.allCases)
    func anIngestCountsAccessTokensOnlyUnderACap(_ kind: TestBackend) throws {
        try TestStore.with(kind) { _, store in
            let (response, context) = try Self.responses()[0]
            try store.ingest(response, context: context)
            let plan = try IngestPlan.mapped(response: response, context: context, for: store.store).readPlan(sweepingFrom: [])
            #expect(try store.store.backend.fetchSynchronously(plan).count(of: .accessTokens) == nil)
            try store.setAccessTokenCap(100)
            #expect(try store.store.backend.fetchSynchronously(plan).count(of: .accessTokens) == 1)
        }
    }

    /// An ingest over the store's cap evicts from a random sample the plan cannot name: it runs as a transaction, and
    /// evicts as one.
    @Test(arguments: [Backend.memory, .counting])
    func anIngestOverTheCapRunsAsATransaction(_ backend: Backend) async throws {
        try await FetchingLookupTests.withStore(backend) { store, counting in
            try await Self.ingestFourUsersUnderACapOfTwo(store)
            if let counting { #expect(counting.writes.load(ordering: .relaxed) >= 2) }
        }
    }

    /// The same on the shared store, whose fetch counts the access tokens only because the store has a cap.
    @Test(.enabled(if: PostgreSQLTestServer.url != nil, "needs the run's PostgreSQL server (make test starts one)"))
    func anIngestOverTheCapEvictsOnTheSharedStore() async throws {
        try await withTemporaryDirectoryAsync { root in
            let store = TestStore(root: root, backend: .postgresql)
            try KeyFile.create(at: store.keyFile)
            try await Self.ingestFourUsersUnderACapOfTwo(try TokenStore.create(store.configuration))
        }
    }

    static func ingestFourUsersUnderACapOfTwo(_ store: TokenStore) async throws {
        try store.setAccessTokenCap(2)
        var evicted = 0
        for user in 0..<4 {
            let result = try await store.ingestApplyingPlan(
                try Self.response("\(user)", uid: "user-\(user)"), context: try Responses.context(now: Self.now + Int64(user))
            )
            evicted += result.accessTokensEvicted
        }
        #expect(evicted == 2)
        #expect(try store.list(AccessToken.self).records.count == 2)
    }

    // MARK: A refresh's rotate-and-ingest

    /// A counting store with one signed-in account, its refresh token as stored, and the refresh's prepared response.
    static func withPreparedRefresh(
        _ body: (TokenStore, CountingBackend, StoredEntity<RefreshToken>, PreparedRefresh) async throws -> Void
    ) async throws {
        try await FetchingLookupTests.withStore(.counting) { store, counting in
            let counting = try #require(counting)
            try store.ingest(try TokenResponse(json: Responses.json()), context: try Responses.context())
            let redeemed = try #require(try store.silentLookup(Responses.query()).refreshToken)
            let context = try Responses.context(grantType: "refresh_token", now: ReferenceTime.now + 60)
            let prepared = try store.prepareRefresh(
                try TokenResponse(json: Responses.json(accessToken: "at-2", refreshToken: "rt-2")), redeemed: redeemed.entity, context: context
            )
            try await body(store, counting, redeemed, prepared)
        }
    }

    static func secrets(_ store: TokenStore) throws -> (accessToken: String?, refreshToken: String?) {
        let answer = try store.silentLookup(Responses.query(now: ReferenceTime.now + 60))
        return (answer.accessToken?.entity.secret.reveal(), try answer.refreshToken?.entity.secret.reveal())
    }

    /// Another process's rotation of `redeemed`, to `rt-other`.
    static func rotateElsewhere(_ store: TokenStore, _ redeemed: StoredEntity<RefreshToken>) throws {
        var other = redeemed.entity
        other.secret = Secret("rt-other")
        try store.replaceRefreshToken(other, expectedSecret: redeemed.entity.secret)
    }

    /// Stores `prepared` through a plan; expects it stored, the response's access token and the other rotation.
    static func expectOtherRotationKept(_ store: TokenStore, _ prepared: PreparedRefresh) async throws {
        let stored = try await store.storeRefreshApplyingPlan(prepared)
        #expect(stored)
        let secrets = try Self.secrets(store)
        #expect(secrets.accessToken == "at-2" && secrets.refreshToken == "rt-other")
    }

    @Test func aPlannedRefreshRotatesAndIngestsInOneFetchAndOneApply() async throws {
        try await Self.withPreparedRefresh { store, counting, _, prepared in
            let (fetches, applies, writes) = (counting.fetches.load(ordering: .relaxed), counting.applies.load(ordering: .relaxed), counting.writes.load(ordering: .relaxed))
            let stored = try await store.storeRefreshApplyingPlan(prepared)
            #expect(stored)
            #expect(counting.fetches.load(ordering: .relaxed) - fetches == 1)
            #expect(counting.applies.load(ordering: .relaxed) - applies == 1)
            #expect(counting.writes.load(ordering: .relaxed) == writes)
            let secrets = try Self.secrets(store)
            #expect(secrets.accessToken == "at-2" && secrets.refreshToken == "rt-2")
            #expect(try store.list(RefreshToken.self).records.count == 1)
        }
    }

    @Test func aPlannedRefreshKeepsARotationStoredMeanwhile() async throws {
        try await Self.withPreparedRefresh { store, _, redeemed, prepared in
            try Self.rotateElsewhere(store, redeemed)
            try await Self.expectOtherRotationKept(store, prepared)
        }
    }

    /// The rotation lands between the planned refresh's fetch and its apply: the apply is refused, and on the new
    /// fetch the other rotation wins, as it would in a transaction that began after it.
    @Test func aRotationBetweenFetchAndApplyIsNotOverwritten() async throws {
        try await Self.withPreparedRefresh { store, counting, redeemed, prepared in
            let once = Atomic<Bool>(false)
            counting.beforeApply.withLock {
                $0 = {
                    guard !once.exchange(true, ordering: .relaxed) else { return }
                    try Self.rotateElsewhere(store, redeemed)
                }
            }
            try await Self.expectOtherRotationKept(store, prepared)
        }
    }

    @Test func aPlannedRefreshAfterASignOutWritesNothing() async throws {
        try await Self.withPreparedRefresh { store, _, _, prepared in
            try store.removeAccount(homeAccountID: User.home, clientID: nil)
            let stored = try await store.storeRefreshApplyingPlan(prepared)
            #expect(!stored)
            #expect(try store.list(AccessToken.self).records.isEmpty)
            #expect(try store.list(RefreshToken.self).records.isEmpty)
        }
    }

    /// Any write body through a plan: a sign-out, starting from an empty plan, widened by each prefix it reads (or run
    /// as a transaction where it scans), removes what the transaction removes.
    @Test func anyWriteCanRunThroughAPlan() async throws {
        try await FetchingLookupTests.withStore(.counting) { planned, _ in
            try await FetchingLookupTests.withStore(.counting) { direct, _ in
                for store in [planned, direct] {
                    for (response, context) in try Self.responses() { try store.ingest(response, context: context) }
                }
                let viaPlan = try await planned.writeApplyingPlan(reading: ReadPlan()) {
                    try $0.removeAccount(homeAccountID: User.home, clientID: User.client, environment: nil)
                }
                let viaTransaction = try direct.removeAccount(homeAccountID: User.home, clientID: User.client)
                #expect(viaPlan.accessTokens == viaTransaction.accessTokens && viaPlan.refreshTokens == viaTransaction.refreshTokens)
                #expect(try Self.contents(planned) == Self.contents(direct))
            }
        }
    }

    // MARK: The seam's parts

    @Test(arguments: TestBackend.allCases)
    func aPlanIsAppliedOnlyOnTheRecordsItWasDecidedOn(_ kind: TestBackend) throws {
        try RecordBackendContractTests.withBackend(kind) { backend in
            let space = KeySpace.accounts
            try RecordBackendContractTests.put(backend, [1, 1], "a")
            var readPlan = ReadPlan()
            readPlan.add(space, prefix: [1])
            let write = try PlannedWrite(try backend.fetchSynchronously(readPlan))
            try Array("b".utf8).withUnsafeBytes { try write.put(in: space, key: [1, 2], value: $0) }
            #expect(try write.delete(in: space, key: [1, 1]))
            #expect(try write.withValue(in: space, forKey: [1, 1]) { _ in true } == nil)

            // Unchanged: applied, in one commit.
            #expect(try backend.applySynchronously(write.plan()) != .conflict)
            #expect(try backend.read { try RecordBackendContractTests.value($0, [1, 2]) } == "b")
            #expect(try backend.read { try RecordBackendContractTests.value($0, [1, 1]) } == nil)

            // Changed since the fetch (a record added to the range): refused, nothing written.
            let stale = try PlannedWrite(try backend.fetchSynchronously(readPlan))
            try Array("c".utf8).withUnsafeBytes { try stale.put(in: space, key: [1, 3], value: $0) }
            try RecordBackendContractTests.put(backend, [1, 4], "d")
            #expect(try backend.applySynchronously(stale.plan()) == .conflict)
            #expect(try backend.read { try RecordBackendContractTests.value($0, [1, 3]) } == nil)

            // A record outside the range changed: no conflict.
            let unrelated = try PlannedWrite(try backend.fetchSynchronously(readPlan))
            try Array("e".utf8).withUnsafeBytes { try unrelated.put(in: space, key: [1, 5], value: $0) }
            try RecordBackendContractTests.put(backend, [2, 1], "f")
            #expect(try backend.applySynchronously(unrelated.plan()) != .conflict)

            // A range fetched but never read, and a count fetched but never read, changed: the decision did not rest on
            // them, so no conflict; a count that was read and changed is one.
            var widerPlan = readPlan
            widerPlan.add(space, prefix: [3])
            widerPlan.addCount(of: space)
            let narrow = try PlannedWrite(try backend.fetchSynchronously(widerPlan))
            _ = try narrow.withValue(in: space, forKey: [1, 2]) { _ in true }
            try Array("g".utf8).withUnsafeBytes { try narrow.put(in: space, key: [1, 6], value: $0) }
            try RecordBackendContractTests.put(backend, [3, 1], "h")
            #expect(try backend.applySynchronously(narrow.plan()) != .conflict)
            let counted = try PlannedWrite(try backend.fetchSynchronously(widerPlan))
            _ = try counted.count(in: space)
            try Array("i".utf8).withUnsafeBytes { try counted.put(in: space, key: [1, 7], value: $0) }
            try RecordBackendContractTests.put(backend, [4, 1], "j")
            #expect(try backend.applySynchronously(counted.plan()) == .conflict)
        }
    }

    @Test func aPlannedWriteRefusesAndRemembersReadsOutsideItsPlan() throws {
        let backend = InMemoryRecordBackend(name: Configuration.inMemoryDirectory)
        for key: [UInt8] in [[5, 1], [5, 2], [5, 3], [6, 1]] { try RecordBackendContractTests.put(backend, key, "v") }
        var readPlan = ReadPlan()
        readPlan.add(.accounts, prefix: [9])
        readPlan.add(.accounts, from: [5], limit: 2)
        let write = try PlannedWrite(try backend.fetchSynchronously(readPlan))
        var seen: [[UInt8]] = []
        // Within the scan's window: served.
        try write.forEach(in: .accounts, from: [5]) { key, _ in key.withUnsafeBytes { key in
            seen.append(Array(key))
            return seen.count < 2
        } }
        #expect(seen == [[5, 1], [5, 2]])
        #expect(write.missed == nil)
        // Past the window (the scan stopped at its limit): refused.
        #expect(throws: StorageError.self) { try write.forEach(in: .accounts, from: [5]) { _, _ in true } }
        #expect(write.missed == .scan(.accounts, from: [5]))
        // Outside every range: refused, and a put there too.
        let outside = try PlannedWrite(try backend.fetchSynchronously(readPlan))
        #expect(throws: StorageError.self) { _ = try outside.withValue(in: .accounts, forKey: [6, 1]) { _ in 0 } }
        #expect(throws: StorageError.self) { try [UInt8]([1]).withUnsafeBytes { try outside.put(in: .idTokens, key: [1], value: $0) } }
        #expect(throws: StorageError.self) { _ = try outside.count(in: .accounts) }
        #expect(outside.missed == .prefix(.accounts, prefix: [6, 1]))
        #expect(outside.mutations.isEmpty)
    }
}
