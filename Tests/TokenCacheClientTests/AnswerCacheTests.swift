import Foundation
import TestSupport
import Testing
import TokenCache

@testable import TokenCacheClient

#if canImport(Glibc)
import Glibc
#endif

/// The in-process L1: repeat hits without a lookup, and never an answer the store no longer gives.
@Suite struct AnswerCacheTests {
    @Test func aRepeatHitComesFromTheL1UntilTheStoreChanges() async throws {
        try await withSignedInClient() { (client, endpoint, clock) async throws in
            #expect(try await client.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
            #expect(client.statistics.answerCacheHits == 0)
            for _ in 0..<3 { #expect(try await client.token(for: User.request(), refresh: endpoint.redeem).value == "at-1") }
            #expect(client.statistics.answerCacheHits == 3)
            // Any commit, here an unrelated one, and the next hit is a lookup again.
            try client.store.put(AppMetadata(clientID: "another-client", environment: "login.microsoftonline.com"))
            #expect(try await client.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
            #expect(client.statistics.answerCacheHits == 3)
            // The token removed: the L1 does not answer for it.
            let key = try #require(try await client.lookup(User.request()).accessToken).entity.key
            try client.store.delete(key)
            let after = try await client.token(for: User.request(), refresh: endpoint.redeem)
            #expect(after.value == "at-2")
            #expect(after.source == .refresh)
            #expect(client.statistics.answerCacheHits == 3)
        }
    }

    /// The L1 judges a kept answer by the store's own expiry rule, at every boundary and for any value.
    @Test func theL1UsesTheStoresExpiryRule() throws {
        let cache = AnswerCache(capacity: 4)
        let request = User.request()
        func answered(expiresOn: Int64, cachedAt: Int64 = 0, refreshOn: Int64? = nil, now: Int64) -> Bool {
            let result = TokenResult(
                accessToken: Secret("at"), expiresOn: expiresOn, refreshOn: refreshOn, scopes: ["user.read"], tokenType: "Bearer", source: .cache,
                cachedAt: cachedAt
            )
            cache.keep(result, for: request, stamp: AnswerStamp(snapshotID: 7))
            return cache.answer(request, now: now) { $0.snapshotID == 7 } != nil
        }
        #expect(answered(expiresOn: 1_300, now: 1_000))
        #expect(!answered(expiresOn: 1_299, now: 1_000))
        #expect(!answered(expiresOn: 5_000, cachedAt: 1_001, now: 1_000))
        #expect(!answered(expiresOn: 5_000, refreshOn: 1_000, now: 1_000))
        #expect(answered(expiresOn: 5_000, refreshOn: 1_001, now: 1_000))
        // Values no lookup would keep still get an answer, not an overflow trap.
        #expect(!answered(expiresOn: .min, now: 0))
        #expect(!answered(expiresOn: .min + 1, now: .max))
        #expect(answered(expiresOn: .max, cachedAt: .min, now: .min))
    }

    @Test func aTokenWithinTheMarginOrPastRefreshOnIsNotServedFromTheL1() async throws {
        try await withSignedInClient(refreshIn: 1800) { (client, endpoint, clock) async throws in
            _ = try await client.token(for: User.request(), refresh: endpoint.redeem)
            clock.advance(by: 1799)
            #expect(try await client.token(for: User.request(), refresh: endpoint.redeem).refreshRecommended == false)
            #expect(client.statistics.answerCacheHits == 1)
            clock.advance(by: 1)
            // refresh_on reached: the lookup answers, flags it, and refreshes in the background.
            let due = try await client.token(for: User.request(), refresh: endpoint.redeem)
            #expect(due.value == "at-1" && due.refreshRecommended)
            #expect(client.statistics.answerCacheHits == 1)
            await client.waitForRefreshes()
            #expect(endpoint.redeemed == ["rt-1"])
        }
        // Without refresh_in: the margin alone.
        let marginClock = TestClock()
        let plain = FakeTokenEndpoint(clock: marginClock)
        try await withClient(clock: marginClock) { client in
            try await client.ingest(plain.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
            _ = try await client.token(for: User.request(), refresh: plain.redeem)
            marginClock.advance(by: 3600 - 300)
            #expect(try await client.token(for: User.request(), refresh: plain.redeem).value == "at-1")
            #expect(client.statistics.answerCacheHits == 1)
            marginClock.advance(by: 1)
            #expect(try await client.token(for: User.request(), refresh: plain.redeem).value == "at-2")
            #expect(client.statistics.answerCacheHits == 1)
        }
    }

    @Test func aClockSetBackBeforeTheTokenWasCachedGetsNoAnswerFromTheL1() async throws {
        try await withSignedInClient() { (client, endpoint, clock) async throws in
            _ = try await client.token(for: User.request(), refresh: endpoint.redeem)
            clock.advance(by: -60)
            // The lookup's rule: a token cached in the future is not usable; the L1 says the same.
            let token = try await client.token(for: User.request(), refresh: endpoint.redeem)
            #expect(client.statistics.answerCacheHits == 0)
            #expect(token.source == .refresh)
        }
    }

    @Test func theL1KeepsAtMostItsCapacityOldestOutFirst() {
        let cache = AnswerCache(capacity: 2)
        let requests = ["A.Read", "B.Read", "C.Read"].map { User.request(scopes: [$0]) }
        let result = Self.result()
        for request in requests { cache.keep(result, for: request, stamp: AnswerStamp(snapshotID: 7)) }
        #expect(cache.count == 2)
        #expect(cache.answer(requests[0], now: 0) { $0.snapshotID == 7 } == nil)
        #expect(cache.answer(requests[1], now: 0) { $0.snapshotID == 7 } != nil)
        #expect(cache.answer(requests[2], now: 0) { $0.snapshotID == 7 } != nil)
        #expect(cache.answer(requests[2], now: 0) { $0.snapshotID == 8 } == nil)
        // Replacing an entry does not evict another.
        cache.keep(result, for: requests[2], stamp: AnswerStamp(snapshotID: 8))
        #expect(cache.count == 2 && cache.answer(requests[1], now: 0) { $0.snapshotID == 7 } != nil)
        #expect(AnswerCache(capacity: 0).answer(requests[0], now: 0) { $0.snapshotID == 7 } == nil)
    }

    /// A stored-token result that expires in an hour from 0.
    static func result() -> TokenResult {
        TokenResult(accessToken: Secret("at"), expiresOn: 3600, refreshOn: nil, scopes: ["A.Read"], tokenType: "Bearer", source: .cache)
    }

    /// Another process adds, replaces and removes the token while this one asks for it as fast as it can: every
    /// answer is one the store gave at some moment during the call.
    @Test func anotherProcessChangingTheTokenNeverMakesTheL1Stale() async throws {
        let root = try makeTemporaryDirectory(prefix: "token-cache-l1")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeyFile.create(at: root + "/key")
        let configuration = Configuration(directory: root + "/store", keySource: .keyFile(path: root + "/key"))
        let clock = TestClock()
        let client = try TokenClient(configuration: configuration, clock: clock)
        let endpoint = FakeTokenEndpoint(clock: clock)
        try await client.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])

        struct NoToken: Error {}
        let reader = Task {
            // The writer's states in order: version k present is 2k, removed after version k is 2k+1. The writer
            // names the version it last wrote in a file, after the commit: read before the lookup, it bounds a
            // removed state's position from below; read after, from above.
            func position(lowerBound: Bool) throws -> Int {
                let earlier = Self.latestVersion(root)
                let answer = try client.store.silentLookup(User.request().query(now: clock.now()))
                if let value = answer.accessToken?.entity.secret.reveal() { return 2 * Int(value.dropFirst(3))! }
                return 2 * (lowerBound ? earlier : Self.latestVersion(root)) + 1
            }
            var checked = 0, stale = 0
            // Until the writer is done, then until the L1 has answered once (the token stays put then, and a repeat
            // is the L1's); long synchronous tests of a full run can hold every thread of the pool for minutes.
            let hardDeadline = ContinuousClock.now + hangBound
            while ContinuousClock.now < hardDeadline, !Self.writerFinished(root) || client.statistics.answerCacheHits == 0 {
                let before = try position(lowerBound: true)
                let got: Int
                do {
                    let token = try await client.token(for: User.request()) { _, _ in throw NoToken() }
                    got = 2 * Int(token.value.dropFirst(3))!
                } catch is NoToken {
                    got = -1
                }
                let after = try position(lowerBound: false)
                if got == -1 {
                    // Saw no token: a removed state must lie between.
                    if !(before % 2 == 1 || after > before) { stale += 1 }
                } else if got < before || got > after {
                    stale += 1
                }
                checked += 1
                try "\(checked)".write(toFile: root + "/checked", atomically: true, encoding: .utf8)
            }
            return (checked, stale)
        }
        await #expect(processExitsWith: .success) { [root = root as String] in
            let configuration = Configuration(directory: root + "/store", keySource: .keyFile(path: root + "/key"))
            let store = try TokenStore.open(configuration)
            var version = 1
            var written: AccessToken.Key? = nil
            // Each round ends with a token stored, so that the reader's quiet phase after the last one has a token
            // for the L1 to answer with (ending on a removal left it none, and the reader looped to its deadline).
            // The pauses (3 ms) pace the writer, so that the reader's lookups fall between its commits. A loaded machine
            // can starve the reader, so the writer goes on until the reader has checked enough answers (bounded).
            let deadline = ContinuousClock.now + .seconds(60)
            while version < AnswerCacheTests.writerVersions
                || (AnswerCacheTests.readerChecks(root) < AnswerCacheTests.minimumChecks && ContinuousClock.now < deadline)
            {
                version += 1
                if version.isMultiple(of: 3), let previous = written {
                    // Removed after version - 1: the version file still names it.
                    try store.delete(previous)
                    try await Task.sleep(for: .milliseconds(3))
                }
                let response = Responses.response(accessToken: "at-\(version)", refreshToken: "rt-1", issuedAt: ReferenceTime.now)
                let context = TokenRequestContext(
                    clientID: User.client, authority: User.authority, requestedScopes: ["User.Read"], now: ReferenceTime.now
                )
                written = try store.ingest(response, context: context).accessToken
                try "\(version)".write(toFile: root + "/version", atomically: true, encoding: .utf8)
                try await Task.sleep(for: .milliseconds(3))
            }
        }
        // The writer is gone, whether it finished or failed.
        try "".write(toFile: root + "/finished", atomically: true, encoding: .utf8)
        let (checked, stale) = try await reader.value
        #expect(stale == 0)
        #expect(checked >= Self.minimumChecks)
        #expect(client.statistics.answerCacheHits > 0)
    }

    /// How many versions of the token the writer stores (each a durable commit, a third of them after a removal):
    /// some three seconds of writing on a 2-core VM, while the reader's lookups run between the commits.
    static let writerVersions = 120

    /// How many answers the reader checks at least while the writer writes.
    static let minimumChecks = 150

    /// How many answers the reader has checked so far (it names the count in a file after each).
    static func readerChecks(_ root: String) -> Int {
        (try? String(contentsOfFile: root + "/checked", encoding: .utf8)).flatMap { Int($0) } ?? 0
    }

    static func writerFinished(_ root: String) -> Bool { FileManager.default.fileExists(atPath: root + "/finished") }

    /// The newest version the writer finished writing (1 before it wrote any).
    static func latestVersion(_ root: String) -> Int {
        (try? String(contentsOfFile: root + "/version", encoding: .utf8)).flatMap { Int($0) } ?? 1
    }
}
