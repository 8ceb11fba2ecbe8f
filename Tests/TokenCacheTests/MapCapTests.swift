import Foundation
import TestSupport
import Testing

@testable import TokenCache
import TokenCacheOperations

/// A store at its map cap: writes fail with `storageFull` and keep nothing of themselves, everything acknowledged
/// before stays readable, and the operations that free space (delete, sign-out, purge) still work, on room the
/// backend keeps in reserve beyond the cap. Once space is freed, writes succeed again.
@Suite struct MapCapTests {
    static let expired: Int64 = 1_000
    static let valid: Int64 = 4_000_000_000

    /// The four tokens the fill writes in its transaction `index`: 600-byte secrets, one account of seven.
    static func batch(_ index: Int) -> [AccessToken] {
        (0..<4).map { slot in
            var token = Samples.accessToken(
                home: "uid\(index % 7).utid", target: "scope-\(index)-\(slot)", secret: String(repeating: "s", count: 600))
            token.expiresOn = index % 2 == 0 ? expired : valid
            return token
        }
    }

    /// Writes batches from `index` on until one fails, then single small tokens until one fails, each with `storageFull`;
    /// returns the keys written.
    static func writeUntilFull(_ cache: TokenStore, from start: Int) -> [AccessToken.Key] {
        var acknowledged: [AccessToken.Key] = []
        for index in start... {
            let tokens = batch(index)
            do {
                try cache.write { writer in for token in tokens { try writer.put(token) } }
                acknowledged += tokens.map(\.key)
            } catch {
                #expect((error as? TokenCacheError)?.code == .storageFull, "\(error)")
                break
            }
        }
        // Then the crumbs: single small tokens until none fits either.
        for index in 0... {
            var token = Samples.accessToken(home: "crumb.utid", target: "crumb-\(start)-\(index)")
            token.expiresOn = valid
            do {
                try cache.put(token)
                acknowledged.append(token.key)
            } catch {
                #expect((error as? TokenCacheError)?.code == .storageFull, "\(error)")
                break
            }
        }
        return acknowledged
    }

    /// A 1 MiB store filled with access tokens of 7 accounts until a write fails, half of them expired. Returns the
    /// keys of the tokens whose writes were acknowledged.
    static func fill(reserve: Int, _ body: (TokenStore, [AccessToken.Key]) throws -> Void) throws {
        try withTemporaryDirectory { root in
            let store = TestStore(root: root)
            try KeyFile.create(at: store.keyFile)
            var configuration = store.configuration
            configuration.initialMapSize = 256 << 10
            configuration.maximumMapSize = 1 << 20
            configuration.reservedMapSize = reserve
            let cache = try TokenStore.create(configuration)
            let acknowledged = writeUntilFull(cache, from: 0)
            #expect(acknowledged.count > 200)
            try body(cache, acknowledged)
        }
    }

    @Test func everyAcknowledgedWriteSurvivesAndTheFreeingOperationsWorkAtTheCap() throws {
        try Self.fill(reserve: 4 << 20) { cache, acknowledged in
            // Pages freed by earlier writes may take a few more batches; then the store is full for any write that adds.
            var acknowledged = acknowledged
            acknowledged += Self.writeUntilFull(cache, from: acknowledged.count)
            for key in acknowledged { #expect(try cache.get(key) != nil) }
            #expect(try cache.verify().isClean)

            #expect(try cache.delete(acknowledged[1]))
            let signedOut = try cache.removeAccount(homeAccountID: "uid3.utid", clientID: nil)
            #expect(signedOut.accessTokens > 10)
            let purged = try cache.purgeExpired(now: 2_000)
            #expect(purged.accessTokensRemoved > 50)

            let left = try cache.list(AccessToken.self)
            #expect(left.corrupt.isEmpty)
            let unexpected = left.records.filter { $0.entity.expiresOn != Self.valid || $0.entity.homeAccountID == "uid3.utid" }
            #expect(unexpected.isEmpty, "\(unexpected.prefix(3).map { ($0.entity.homeAccountID, $0.entity.expiresOn) })")
            // Usable again once space was freed.
            let late = Self.batch(acknowledged.count + 1)
            try cache.write { writer in for token in late { try writer.put(token) } }
            #expect(try cache.verify().isClean)
        }
    }

    /// With a reserve too small for a thousand deletes in one transaction, the purge falls back to smaller batches
    /// instead of failing.
    @Test func aPurgeAtTheCapShrinksItsBatchesToTheReserve() throws {
        try Self.fill(reserve: 24 << 10) { cache, acknowledged in
            let expiredCount = try cache.list(AccessToken.self).records.filter { $0.entity.expiresOn == Self.expired }.count
            let report = try cache.purgeExpired(now: 2_000)
            #expect(report.accessTokensRemoved == expiredCount)
            #expect(report.transactions > 1)
            #expect(try cache.list(AccessToken.self).records.count == acknowledged.count - expiredCount)
            #expect(try cache.verify().isClean)
        }
    }
}
