import Foundation
import Synchronization
import TestSupport
import Testing
@testable import TokenCache
import TokenCacheOperations
import TokenCacheStorage

/// A store with a cap on access tokens: writes past it evict expired tokens first, then the least recently cached,
/// never the token just written and never another kind; setting a cap below the store's size brings it down in
/// bounded transactions; the cap is part of the store.
@Suite struct AccessTokenCapTests {
    static let valid: Int64 = 4_000_000_000
    static let environment = "login.microsoftonline.com"

    static func token(_ index: Int, cachedAt: Int64? = nil, expiresOn: Int64 = valid, account: Int? = nil) -> AccessToken {
        AccessToken(
            homeAccountID: "u\(account ?? index).t", environment: environment, clientID: "c", realm: "t", target: "scope\(index)",
            secret: Secret("at-\(index)"), cachedAt: cachedAt ?? Int64(1_000 + index), expiresOn: expiresOn
        )
    }

    static func storedIndexes(_ cache: TokenStore) throws -> Set<Int> {
        Set(try cache.list(AccessToken.self).records.map { Int($0.entity.target.dropFirst("scope".count))! })
    }

    @Test(arguments: TestBackend.allCases) func aWriteOverTheCapEvictsTheLeastRecentlyCached(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            #expect(try cache.accessTokenCap() == nil)
            let report = try cache.setAccessTokenCap(10)
            #expect(report == CapReport(cap: 10, accessTokens: 0, evicted: 0, transactions: 1))
            // Not in cached-at order, so that storage order cannot stand in for age.
            for index in [4, 0, 7, 2, 9, 1, 8, 3, 6, 5] { try cache.put(Self.token(index)) }
            for index in 0..<12 { try cache.put(RefreshToken(homeAccountID: "u\(index).t", environment: Self.environment, clientID: "c", secret: Secret("rt"))) }
            let evicted = try cache.write { writer in
                try writer.put(Self.token(10))
                return writer.accessTokensEvicted
            }
            #expect(evicted == 1)
            #expect(try Self.storedIndexes(cache) == Set(1...10))
            // Rewriting a stored token adds nothing, so evicts nothing.
            try cache.put(Self.token(3, cachedAt: 5_000))
            #expect(try Self.storedIndexes(cache) == Set(1...10))
            try cache.put(Self.token(11))
            #expect(try Self.storedIndexes(cache) == Set(2...11))
            #expect(try cache.list(RefreshToken.self).records.count == 12, "refresh tokens are never evicted")
            #expect(try cache.verify().isClean)
        }
    }

    @Test(arguments: TestBackend.allCases) func expiredTokensGoBeforeOldOnes(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.setAccessTokenCap(5)
            for index in 0..<5 { try cache.put(Self.token(index, expiresOn: index == 3 ? 1_000 : Self.valid)) }
            try cache.put(Self.token(5))
            #expect(try Self.storedIndexes(cache) == [0, 1, 2, 4, 5])
        }
    }

    @Test func theTokenJustWrittenIsNeverItsOwnVictim() throws {
        try TestStore.with { _, cache in
            try cache.setAccessTokenCap(1)
            try cache.put(Self.token(0, cachedAt: 9_000))
            // Older than the one it joins, and alone in its bucket (stored under the bucket's lone key).
            try cache.put(Self.token(1, cachedAt: 1))
            #expect(try Self.storedIndexes(cache) == [1])
            #expect(try cache.verify().isClean)
        }
    }

    @Test func anIngestReportsWhatItEvicted() throws {
        try TestStore.with { _, cache in
            try cache.setAccessTokenCap(1)
            _ = try cache.ingest(try TokenResponse(json: Responses.json()), context: try Responses.context())
            let second = try cache.ingest(
                try TokenResponse(json: Responses.json(scope: "Mail.Read")), context: try Responses.context(client: "other-client", scopes: ["Mail.Read"]))
            #expect(second.accessTokensEvicted == 1)
            #expect(try cache.list(AccessToken.self).records.map(\.entity.clientID) == ["other-client"])
            #expect(try cache.list(RefreshToken.self).records.count == 2)
        }
    }

    /// A cap set below the store's size evicts the excess in bounded transactions, keeping exactly the newest tokens
    /// (ties of age aside, which the sampled eviction settles).
    @Test(arguments: TestBackend.allCases) func loweringTheCapEvictsTheExcessInBoundedTransactions(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.write { writer in for index in 0..<1_000 { try writer.put(Self.token(index, account: index % 40)) } }
            try cache.write { writer in for index in 1_000..<1_010 { try writer.put(Self.token(index, expiresOn: 1_000)) } }
            var progressCalls = 0
            let report = try cache.setAccessTokenCap(200) { _ in progressCalls += 1 }
            #expect(report.cap == 200 && report.accessTokens == 200 && report.evicted == 810)
            #expect(report.transactions >= 2)
            #expect(progressCalls == report.transactions)
            #expect(try Self.storedIndexes(cache) == Set(800..<1_000))
            #expect(try cache.verify().isClean)
        }
    }

    /// Tokens of one age (an import stamps them alike): the exact pass removes none of them, sampling the excess.
    @Test func tokensOfOneAgeStillComeDownToTheCap() throws {
        try TestStore.with { _, cache in
            try cache.write { writer in for index in 0..<300 { try writer.put(Self.token(index, cachedAt: 5, account: index % 20)) } }
            let report = try cache.setAccessTokenCap(100)
            #expect(report.accessTokens == 100 && report.evicted == 200)
            #expect(try cache.list(AccessToken.self).records.count == 100)
            #expect(try cache.verify().isClean)
        }
    }

    @Test func theCapIsPartOfTheStoreAndCanBeRemoved() throws {
        try TestStore.with { store, cache in
            try cache.setAccessTokenCap(3)
            #expect(try TokenStore.open(store.configuration).accessTokenCap() == 3)
            #expect(errorCode { try cache.setAccessTokenCap(0) } == .invalidArgument)
            #expect(try cache.setAccessTokenCap(nil).cap == nil)
            #expect(try cache.accessTokenCap() == nil)
            for index in 0..<5 { try cache.put(Self.token(index)) }
            #expect(try Self.storedIndexes(cache).count == 5)
        }
    }

    @Test func aDamagedCapRecordIsReportedNotIgnored() throws {
        try TestStore.with { store, cache in
            try cache.setAccessTokenCap(3)
            var value = try #require(try store.rawEntries(.meta).first { $0.0 == Array("access-token-cap".utf8) }?.1)
            value[value.count - 1] ^= 1
            try store.rawPut(.meta, key: Array("access-token-cap".utf8), value: value)
            #expect(errorCode { try cache.accessTokenCap() } == .corruptRecord)
            #expect(try cache.verify().damagedMetaRecords.map(\.name) == ["access-token-cap"])
            // Writes go on as if there were no cap.
            for index in 0..<5 { try cache.put(Self.token(index)) }
            #expect(try Self.storedIndexes(cache).count == 5)
            #expect(try cache.setAccessTokenCap(4).cap == 4, "setting the cap again repairs it")
            #expect(try Self.storedIndexes(cache).count == 4)
        }
    }
}

/// The bounded sweep each ingest runs: expired tokens of other buckets leave the store without anyone writing there.
@Suite struct ExpiredSweepTests {
    @Test func eachIngestRemovesTheExpiredTokensOfTheNextStretchOfKeys() throws {
        try TestStore.with { _, cache in
            let context = try Responses.context()
            try cache.write { writer in
                for index in 0..<ExpirySweep.size / 2 - 1 {
                    try writer.put(AccessTokenCapTests.token(index, expiresOn: context.now - 1))
                    try writer.put(AccessTokenCapTests.token(100 + index, expiresOn: context.now + 3_600))
                }
            }
            let result = try cache.ingest(try TokenResponse(json: Responses.json()), context: context)
            #expect(result.expiredAccessTokensSwept == ExpirySweep.size / 2 - 1)
            let left = try cache.list(AccessToken.self).records.map(\.entity)
            #expect(left.count == ExpirySweep.size / 2)
            #expect(left.allSatisfy { $0.expiresOn > context.now })
            #expect(try cache.verify().isClean)
        }
    }

    /// The sweep's cursor is the store's, shared by its writes: a transaction hands it over only when it commits, so
    /// that a body that throws (or re-runs) moves no state outside its transaction.
    @Test func onlyACommittedSweepMovesTheCursor() throws {
        try TestStore.with { _, cache in
            try cache.write { writer in
                for index in 0..<ExpirySweep.size + 4 { try writer.put(AccessTokenCapTests.token(index)) }
            }
            struct Abandon: Error {}
            let before = cache.store.sweepCursor.withLock { $0.key }
            #expect(throws: Abandon.self) {
                try cache.write { writer in
                    _ = try writer.sweepExpiredAccessTokens(now: 0, protecting: [])
                    throw Abandon()
                }
            }
            #expect(cache.store.sweepCursor.withLock { $0.key } == before)
            try cache.write { writer in _ = try writer.sweepExpiredAccessTokens(now: 0, protecting: []) }
            let after = cache.store.sweepCursor.withLock { $0.key }
            #expect(after != before)
            // Two sweeps in one transaction continue from each other, as two transactions do.
            try cache.write { writer in
                _ = try writer.sweepExpiredAccessTokens(now: 0, protecting: [])
                #expect(writer.sweepCursor != after)
                _ = try writer.sweepExpiredAccessTokens(now: 0, protecting: [])
            }
            #expect(cache.store.sweepCursor.withLock { $0.key } == after)
        }
    }
}
