import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TokenCache
import TokenCacheRecords
import TokenCacheStorage

/// When a hit's companions (refresh token, ID token, account, family membership) are read: with the lookup, or on
/// first access from a transaction of their own (the default).
@Suite struct SilentLookupCompanionTests {
    /// The backends that read companions on first access when asked to. A shared store fetches them with the lookup
    /// (``CompanionLoading``): what happens between the lookup and the first access cannot reach them there.
    static let deferringBackends = TestBackend.allCases.filter { $0 != .postgresql }

    private func query(_ loading: CompanionLoading, scopes: [String] = ["User.Read"]) -> SilentLookupQuery {
        var query = Responses.query(scopes: scopes)
        query.companionLoading = loading
        return query
    }

    private func ingest(_ cache: TokenStore, refreshToken: String = "rt-1") throws {
        try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: refreshToken, foci: "1")), context: try Responses.context())
    }

    /// Replaces the stored refresh token `rt-1` with `rt-2`, as a redemption that rotates it would.
    private func rotate(_ current: StoredEntity<RefreshToken>?, in cache: TokenStore) throws {
        var rotated = try #require(current).entity
        rotated.secret = Secret("rt-2")
        try cache.replaceRefreshToken(rotated, expectedSecret: Secret("rt-1"))
    }

    private func summary(_ companions: SilentLookupCompanions) -> [String] {
        [
            companions.refreshToken?.entity.secret.reveal() ?? "-", companions.refreshToken?.fingerprint ?? "-",
            companions.idToken?.entity.secret.reveal() ?? "-", companions.idToken.map { "\($0.revision)" } ?? "-",
            companions.account?.entity.username ?? "-", companions.account?.fingerprint ?? "-",
            companions.familyMembership.rawValue, "\(companions.corrupt.count)",
        ]
    }

    @Test(arguments: TestBackend.allCases)
    func companionsReadOnFirstAccessAreThoseReadWithTheLookup(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try ingest(cache)
            let deferred = try cache.silentLookup(query(.onFirstAccess))
            let eager = try cache.silentLookup(query(.withLookup))
            #expect(deferred.outcome == .hit && eager.outcome == .hit)
            #expect(deferred.accessToken == eager.accessToken)
            let (late, early) = (try deferred.companions, try eager.companions)
            #expect(summary(late) == summary(early))
            #expect(summary(late) == ["rt-1", early.refreshToken!.fingerprint, Responses.idToken(), "\(early.idToken!.revision)", User.username,
                                      early.account!.fingerprint, "member", "0"])
            #expect(backend.isFirst(early.idToken!.revision))
            #expect(late.fromLookupSnapshot && early.fromLookupSnapshot)
        }
    }

    /// On a shared store the lookup's one fetch brings the companions, asked for on first access or not: a write
    /// between the lookup and the first access does not reach them.
    @Test(.enabled(if: TestBackend.allCases.contains(.postgresql))) func aSharedStoreFetchesCompanionsWithTheLookup() throws {
        try TestStore.with(.postgresql) { _, cache in
            try ingest(cache)
            let result = try cache.silentLookup(query(.onFirstAccess))
            let rotated = try #require(try cache.silentLookup(query(.withLookup)).companions.refreshToken)
            try rotate(rotated, in: cache)
            let companions = try result.companions
            #expect(companions.refreshToken?.entity.secret.reveal() == "rt-1" && companions.fromLookupSnapshot)
        }
    }

    @Test(arguments: Self.deferringBackends)
    func aWriteBetweenLookupAndFirstAccessIsSeenAndFlagged(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try ingest(cache)
            let deferred = try cache.silentLookup(query(.onFirstAccess))
            let eager = try cache.silentLookup(query(.withLookup))
            try rotate(try eager.refreshToken, in: cache)

            // Read after the rotation: the newer state, flagged as such.
            #expect(try deferred.refreshToken?.entity.secret.reveal() == "rt-2")
            #expect(try deferred.companions.fromLookupSnapshot == false)
            // Read with the lookup: the lookup's snapshot.
            #expect(try eager.refreshToken?.entity.secret.reveal() == "rt-1")
            #expect(try eager.companions.fromLookupSnapshot)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func companionsAreReadOnceAndSharedByCopiesOfTheResult(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try ingest(cache)
            let result = try cache.silentLookup(query(.onFirstAccess))
            let copy = result
            let first = try copy.companions
            #expect(first.refreshToken?.entity.secret.reveal() == "rt-1" && first.fromLookupSnapshot)
            try rotate(first.refreshToken, in: cache)
            // Already read: neither the original nor the copy reads again.
            #expect(try result.refreshToken?.entity.secret.reveal() == "rt-1")
            #expect(try result.companions.fromLookupSnapshot)
            #expect(summary(try result.companions) == summary(first))
        }
    }

    @Test(arguments: Self.deferringBackends)
    func aSignOutBeforeFirstAccessLeavesNoCompanions(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try ingest(cache)
            let result = try cache.silentLookup(query(.onFirstAccess))
            try cache.removeAccount(homeAccountID: User.home, clientID: nil)
            let companions = try result.companions
            #expect(result.accessToken?.entity.secret.reveal() == "at-1")  // read with the lookup
            #expect(companions.refreshToken == nil && companions.idToken == nil && companions.account == nil)
            #expect(!companions.fromLookupSnapshot)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func outcomesOtherThanAHitReadTheirCompanionsWithTheLookup(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try ingest(cache)
            let refresh = try cache.silentLookup(query(.onFirstAccess, scopes: ["Mail.Send"]))
            #expect(refresh.outcome == .refresh)
            try cache.removeAccount(homeAccountID: User.home, clientID: nil)
            #expect(try refresh.refreshToken?.entity.secret.reveal() == "rt-1")
            #expect(try refresh.companions.fromLookupSnapshot)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func concurrentFirstAccessesReadOnceAndAgree(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try ingest(cache)
            let result = try cache.silentLookup(query(.onFirstAccess))
            let seen = Mutex<[[String]]>([])
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let companions = (try? result.companions).map(summary) ?? ["error"]
                seen.withLock { $0.append(companions) }
            }
            let all = seen.withLock { $0 }
            #expect(all.count == 8 && Set(all).count == 1 && all.first?.first == "rt-1")
        }
    }

    @Test(arguments: Self.deferringBackends)
    func damagedCompanionsAreSkippedAndReportedOnFirstAccess(backend: TestBackend) throws {
        try TestStore.with(backend) { store, cache in
            try ingest(cache)
            let eager = try cache.silentLookup(query(.withLookup))
            let idTokenKey = try #require(try eager.idToken).record.key
            let original = try #require(store.rawEntries(KeySpace.idTokens).first { $0.0 == idTokenKey }?.1)
            var damaged = original
            damaged[damaged.count - 1] ^= 0x80
            let result = try cache.silentLookup(query(.onFirstAccess))
            try store.rawPut(KeySpace.idTokens, key: idTokenKey, value: damaged)
            #expect(result.outcome == .hit)
            #expect(try result.idToken == nil)
            #expect(try result.refreshToken?.entity.secret.reveal() == "rt-1" && result.account != nil)
            let corrupt = try result.corrupt
            #expect(corrupt.map(\.kind) == [.idToken])
            #expect(corrupt.first?.fingerprint == cache.store.keyring.fingerprint(database: KeySpace.idTokens.name, key: idTokenKey))
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aDamagedAccessTokenIsSkippedForAnotherCandidate(backend: TestBackend) throws {
        try TestStore.with(backend) { store, cache in
            try ingest(cache)
            // A second token of the bucket that also covers User.Read and expires later: the preferred candidate.
            var newer = try #require(try cache.silentLookup(query(.onFirstAccess)).accessToken).entity
            newer.target = "User.Read Mail.Read"
            newer.secret = Secret("at-new")
            newer.expiresOn += 10  // same cached_at: the later expiry wins
            try cache.put(newer)
            #expect(try cache.silentLookup(query(.onFirstAccess)).accessToken?.entity.secret.reveal() == "at-new")
            let newest = try #require(try cache.silentLookup(query(.onFirstAccess)).accessToken).record.key
            for (position, _) in [(40, "summary"), (-1, "body")] {
                var damaged = try #require(store.rawEntries(KeySpace.accessTokens).first { $0.0 == newest }?.1)
                damaged[position < 0 ? damaged.count - 1 : position] ^= 0x01
                try store.rawPut(KeySpace.accessTokens, key: newest, value: damaged)
                let result = try cache.silentLookup(query(.onFirstAccess))
                #expect(result.accessToken?.entity.secret.reveal() == "at-1")
                #expect(try result.corrupt.map(\.kind) == [.accessToken])
                #expect(try result.refreshToken != nil)
                damaged[position < 0 ? damaged.count - 1 : position] ^= 0x01  // restore for the next round
                try store.rawPut(KeySpace.accessTokens, key: newest, value: damaged)
            }
        }
    }
}
