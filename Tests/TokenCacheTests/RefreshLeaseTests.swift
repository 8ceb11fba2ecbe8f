import Foundation
import TestSupport
import Testing

@testable import TokenCache
import TokenCacheOperations
@testable import TokenCacheRecords
import TokenCacheStorage

/// Refresh leases (FORMAT.md §5.7): taken by one holder at a time, lapsing at their expiry, released only by their
/// holder, refused for a refresh token read before it was rotated, and harmless when damaged.
@Suite struct RefreshLeaseTests {
    static let now = ReferenceTime.nowMilliseconds

    /// A store holding one refresh token, and that token as stored.
    static func withRefreshToken<R>(_ body: (TestStore, TokenStore, StoredEntity<RefreshToken>) throws -> R) throws -> R {
        try TestStore.with { testStore, store in
            try store.put(Samples.refreshToken())
            return try body(testStore, store, try #require(try store.get(Samples.refreshToken().key)))
        }
    }

    @Test func oneHolderAtATimeUntilTheLeaseLapses() throws {
        try Self.withRefreshToken { _, store, token in
            guard case .taken(let first) = try store.takeRefreshLease(on: token, duration: .seconds(30), now: Self.now) else {
                Issue.record("the first attempt did not take the lease")
                return
            }
            #expect(first.expiresAt == Self.now + 30_000)
            #expect(first.holder.count == 32 && first.holder.allSatisfy(\.isHexDigit) && first.holder == first.holder.lowercased())
            #expect(try store.read { try $0.refreshLeaseExpiry(on: token.entity.key, now: Self.now) } == first.expiresAt)
            // Held: others are told until when, up to the last millisecond.
            #expect(try store.takeRefreshLease(on: token, duration: .seconds(30), now: Self.now + 29_999) == .held(until: first.expiresAt))
            // Lapsed: the next taker gets it, with a holder of its own; the first can no longer release it.
            guard case .taken(let second) = try store.takeRefreshLease(on: token, duration: .seconds(5), now: first.expiresAt) else {
                Issue.record("a lapsed lease was not taken over")
                return
            }
            #expect(second.holder != first.holder)
            #expect(try store.releaseRefreshLease(first) == false)
            #expect(try store.read { try $0.refreshLeaseExpiry(on: token.entity.key, now: first.expiresAt) } == second.expiresAt)
            #expect(try store.releaseRefreshLease(second) == true)
            #expect(try store.read { try $0.refreshLeaseExpiry(on: token.entity.key, now: 0) } == nil)
        }
    }

    @Test func onlyTheHolderRenewsItsLease() throws {
        try Self.withRefreshToken { _, store, token in
            guard case .taken(let lease) = try store.takeRefreshLease(on: token, duration: .seconds(1), now: Self.now) else {
                Issue.record("not taken")
                return
            }
            let renewed = try #require(try store.renewRefreshLease(lease, duration: .seconds(30), now: Self.now + 900))
            #expect(renewed.expiresAt == Self.now + 900 + 30_000 && renewed.holder == lease.holder)
            #expect(try store.takeRefreshLease(on: token, duration: .seconds(1), now: Self.now + 2_000) == .held(until: renewed.expiresAt))
            // Lapsed and taken by another: the first holder's renewal finds it lost.
            guard case .taken(let other) = try store.takeRefreshLease(on: token, duration: .seconds(1), now: renewed.expiresAt) else {
                Issue.record("a lapsed lease was not taken over")
                return
            }
            #expect(try store.renewRefreshLease(lease, duration: .seconds(30), now: renewed.expiresAt + 1) == nil)
            #expect(try store.read { try $0.refreshLeaseExpiry(on: token.entity.key, now: renewed.expiresAt) } == other.expiresAt)
        }
    }

    @Test func aTokenRotatedOrRemovedSinceItWasReadIsSuperseded() throws {
        try Self.withRefreshToken { _, store, token in
            var rotated = token.entity
            rotated.secret = Secret("rotated")
            try store.replaceRefreshToken(rotated, expectedSecret: token.entity.secret)
            #expect(try store.takeRefreshLease(on: token, duration: .seconds(30), now: Self.now) == .superseded)
            let current = try #require(try store.get(token.entity.key))
            guard case .taken = try store.takeRefreshLease(on: current, duration: .seconds(30), now: Self.now) else {
                Issue.record("the current token's lease was not taken")
                return
            }
            try store.delete(token.entity.key)
            #expect(try store.takeRefreshLease(on: current, duration: .seconds(30), now: Self.now) == .superseded)
        }
    }

    @Test func aDamagedLeaseBindsNobody() throws {
        try Self.withRefreshToken { testStore, store, token in
            guard case .taken = try store.takeRefreshLease(on: token, duration: .seconds(30), now: Self.now) else {
                Issue.record("not taken")
                return
            }
            let leaseKey = try #require(try testStore.rawEntries(KeySpace.meta).map(\.0).first { RecordStore.isRefreshLeaseKey($0) })
            var value = try #require(try testStore.rawEntries(KeySpace.meta).first { $0.0 == leaseKey }?.1)
            value[value.count - 1] ^= 1
            try testStore.rawPut(KeySpace.meta, key: leaseKey, value: value)
            #expect(try store.read { try $0.refreshLeaseExpiry(on: token.entity.key, now: Self.now) } == nil)
            guard case .taken = try store.takeRefreshLease(on: token, duration: .seconds(30), now: Self.now) else {
                Issue.record("a damaged lease was not overwritten")
                return
            }
            // The lease key is the refresh token's storage key in hex: no identifier in plaintext.
            #expect(String(decoding: leaseKey, as: UTF8.self) == "refresh-lease/" + RefreshToken.storageKey(for: token.entity.key, index: store.store.keyring.index).map { String(format: "%02x", $0) }.joined())
        }
    }

    /// The silent lookup does not offer a refresh token the token endpoint refused: it answers interaction required
    /// (still naming the token), until a rotation or a sign-in stores a new revision.
    @Test func theSilentLookupHoldsBackARefusedRefreshToken() throws {
        try TestStore.with { _, store in
            try store.put(Samples.refreshToken(family: nil))
            let query = SilentLookupQuery(
                clientID: Samples.client, homeAccountID: Samples.home, environment: "login.microsoftonline.com", realm: "utid1",
                scopes: ["User.Read"], now: Samples.now
            )
            #expect(try store.silentLookup(query).outcome == .refresh)
            let stored = try #require(try store.get(Samples.refreshToken(family: nil).key))
            guard case .taken(let lease) = try store.takeRefreshLease(on: stored, duration: .seconds(30), now: Self.now) else {
                Issue.record("no lease")
                return
            }
            try store.recordRefusedRedemption(lease, of: stored, now: Self.now + 100)
            let refused = try store.silentLookup(query)
            #expect(refused.outcome == .interactionRequired)
            #expect(try refused.refreshToken?.revision == stored.revision)
            try store.put(Samples.refreshToken(family: nil, secret: "rt-rotated"))
            #expect(try store.silentLookup(query).outcome == .refresh)
        }
    }

    /// The next taker on a token must learn that its lease follows one whose holder stopped (and may yet store a
    /// rotation), even when leases on other tokens were taken in between, whose clean-up removes lapsed leases.
    @Test func aLapsedLeaseOutlivesOtherTakersCleanUpLongEnoughToBeFollowed() throws {
        try TestStore.with { _, store in
            try store.put(Samples.refreshToken(home: "a.utid1"))
            try store.put(Samples.refreshToken(home: "b.utid1"))
            let first = try #require(try store.get(Samples.refreshToken(home: "a.utid1").key))
            let other = try #require(try store.get(Samples.refreshToken(home: "b.utid1").key))
            guard case .taken(let stopped) = try store.takeRefreshLease(on: first, duration: .seconds(1), now: Self.now) else {
                Issue.record("no lease")
                return
            }
            #expect(!stopped.followsLapsedLease)
            _ = try store.takeRefreshLease(on: other, duration: .seconds(1), now: Self.now + 5_000)
            guard case .taken(let next) = try store.takeRefreshLease(on: first, duration: .seconds(1), now: Self.now + 6_000) else {
                Issue.record("the lapsed lease was not taken over")
                return
            }
            #expect(next.followsLapsedLease)
        }
    }

    @Test func takingALeaseRemovesLapsedLeasesOfOtherTokensUpToSixteen() throws {
        try TestStore.with { testStore, store in
            // Twenty accounts' tokens, each leased by a holder that died long ago.
            var tokens: [StoredEntity<RefreshToken>] = []
            for index in 0..<21 {
                try store.put(Samples.refreshToken(home: "uid\(index).utid1"))
                tokens.append(try #require(try store.get(Samples.refreshToken(home: "uid\(index).utid1").key)))
            }
            for token in tokens.dropFirst() { _ = try store.takeRefreshLease(on: token, duration: .seconds(1), now: 0) }
            func leaseCount() throws -> Int { try testStore.rawEntries(KeySpace.meta).count { RecordStore.isRefreshLeaseKey($0.0) } }
            #expect(try leaseCount() == 20)
            _ = try store.takeRefreshLease(on: tokens[0], duration: .seconds(30), now: Self.now)
            #expect(try leaseCount() == 20 - 16 + 1)
            _ = try store.takeRefreshLease(on: tokens[0], duration: .seconds(30), now: Self.now + 60_000)
            #expect(try leaseCount() == 1)
        }
    }

    @Test func aRotationOfTheDataKeyKeepsLeasesReadable() throws {
        try Self.withRefreshToken { testStore, _, token in
            // Sealed under a second data key (the first stays for the store's life), which the next rotation retires.
            try TokenStore.open(testStore.configuration).rotateDataKey()
            let store = try TokenStore.open(testStore.configuration)
            guard case .taken(let lease) = try store.takeRefreshLease(on: token, duration: .seconds(30), now: Self.now) else {
                Issue.record("not taken")
                return
            }
            try store.rotateDataKey()
            let reopened = try TokenStore.open(testStore.configuration)
            #expect(try reopened.info().dataKeyCount == 2)
            #expect(try reopened.read { try $0.refreshLeaseExpiry(on: token.entity.key, now: Self.now) } == lease.expiresAt)
            #expect(try reopened.releaseRefreshLease(lease))
        }
    }
}
