import Foundation
import TestSupport
import Testing
@testable import TokenCache
@testable import TokenCacheOperations

/// Purging expired tokens removes exactly the expired ones, whatever the batch boundaries, keeps lone tokens where
/// the format puts them, and a dry run writes nothing.
@Suite struct PurgeExpiredTests {
    static let now: Int64 = 1_800_000_000
    static let environment = "login.microsoftonline.com"

    /// Tokens over many buckets of one to four tokens, each expired or not at random; refresh tokens with and without
    /// an expiry of their own.
    static func populate(_ cache: TokenStore, seed: UInt64) throws {
        var generator = SplitMix64(seed: seed)
        try cache.write { writer in
            for account in 0..<6 {
                for client in 0..<3 {
                    for scope in 0..<Int.random(in: 1...4, using: &generator) {
                        let expiresOn = Self.now + [-7_200, -60, 0, 1, 299, 3_600][Int.random(in: 0..<6, using: &generator)]
                        let token = AccessToken(
                            homeAccountID: "u\(account).t", environment: environment, clientID: "c\(client)", realm: "t",
                            target: "scope\(scope).read", secret: Secret("at"), cachedAt: Self.now - 10_000, expiresOn: expiresOn
                        )
                        try writer.put(token)
                    }
                }
                try writer.put(RefreshToken(homeAccountID: "u\(account).t", environment: environment, clientID: "c0", secret: Secret("rt")))
                try writer.put(RefreshToken(
                    homeAccountID: "u\(account).t", environment: environment, clientID: "c1", secret: Secret("rt"),
                    expiresOn: account % 2 == 0 ? Self.now - 1 : Self.now + 86_400
                ))
            }
        }
    }

    /// The stored access tokens, expired and not (the oracle is what is stored: writing a token into a bucket already
    /// drops the bucket's expired tokens).
    static func split(_ cache: TokenStore) throws -> (expired: Set<AccessToken.Key>, valid: Set<AccessToken.Key>) {
        let tokens = try cache.list(AccessToken.self).records.map(\.entity)
        return (Set(tokens.filter { $0.expiresOn <= now }.map(\.key)), Set(tokens.filter { $0.expiresOn > now }.map(\.key)))
    }

    static func accessTokenKeys(_ cache: TokenStore) throws -> Set<AccessToken.Key> {
        Set(try cache.list(AccessToken.self).records.map(\.entity.key))
    }

    @Test(arguments: TestBackend.allCases, [(1, 1), (2, 1), (3, 2), (5, 3), (4_096, 1_024)])
    func removesExactlyTheExpiredAcrossEveryBatchBoundary(backend: TestBackend, batch: (Int, Int)) throws {
        try TestStore.with(backend) { _, cache in
            try Self.populate(cache, seed: UInt64(batch.0 * 31 + batch.1))
            let (expired, valid) = try Self.split(cache)
            #expect(!expired.isEmpty && !valid.isEmpty)
            let report = try cache.purgeExpired(
                olderThan: 0, now: Self.now, dryRun: false, batch: TokenStore.PurgeBatch(examined: batch.0, removed: batch.1), progress: nil
            )
            #expect(report.accessTokensRemoved == expired.count && report.refreshTokensRemoved == 3)
            #expect(try Self.accessTokenKeys(cache) == valid)
            #expect(try cache.list(RefreshToken.self).records.count == 9)
            #expect(try cache.verify().isClean, "lone tokens stay under their bucket prefix")
            #expect(report.transactions >= 1 && report.transactions <= report.accessTokensRemoved + report.refreshTokensRemoved)
            // Nothing left to purge.
            let again = try cache.purgeExpired(now: Self.now)
            #expect(again.accessTokensRemoved == 0 && again.refreshTokensRemoved == 0 && again.transactions == 0)
        }
    }

    @Test(arguments: TestBackend.allCases, [(1, 1), (3, 2), (4_096, 1_024)])
    func aDryRunCountsAndWritesNothing(backend: TestBackend, batch: (Int, Int)) throws {
        try TestStore.with(backend) { _, cache in
            try Self.populate(cache, seed: 5)
            let (expired, valid) = try Self.split(cache)
            let before = try cache.snapshot()
            let report = try cache.purgeExpired(
                olderThan: 0, now: Self.now, dryRun: true, batch: TokenStore.PurgeBatch(examined: batch.0, removed: batch.1), progress: nil
            )
            #expect(report.dryRun && report.accessTokensRemoved == expired.count && report.refreshTokensRemoved == 3 && report.transactions == 0)
            let after = try cache.snapshot()
            #expect(after.accessTokens == before.accessTokens && after.refreshTokens == before.refreshTokens)
            #expect(try Self.accessTokenKeys(cache) == expired.union(valid))
        }
    }

    @Test func olderThanKeepsRecentlyExpiredTokens() throws {
        try TestStore.with { _, cache in
            try Self.populate(cache, seed: 9)
            let tokens = try cache.list(AccessToken.self).records.map(\.entity)
            let report = try cache.purgeExpired(olderThan: 3_600, now: Self.now)
            #expect(report.accessTokensRemoved == tokens.filter { $0.expiresOn <= Self.now - 3_600 }.count)
            #expect(try cache.list(AccessToken.self).records.allSatisfy { $0.entity.expiresOn > Self.now - 3_600 })
            // The refresh tokens expired 1 s ago are not an hour old.
            #expect(report.refreshTokensRemoved == 0)
        }
    }

    @Test func theResumeKeyStepsBackToTheBucketOnlyAfterARemoval() {
        let bucket = [UInt8](repeating: 7, count: RecordStore.bucketPrefixCount)
        let entry = bucket + [UInt8](repeating: 1, count: 16)
        #expect(TokenStore.resumeKey(after: entry, removedAny: true, kind: .accessToken) == bucket)
        #expect(TokenStore.resumeKey(after: entry, removedAny: false, kind: .accessToken) == entry + [0])
        #expect(TokenStore.resumeKey(after: entry, removedAny: true, kind: .refreshToken) == entry + [0])
        #expect(TokenStore.resumeKey(after: bucket, removedAny: true, kind: .accessToken) == bucket + [0])
    }
}
