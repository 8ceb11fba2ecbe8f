import Foundation
import Synchronization
import TestSupport
import Testing
import TokenCache

@testable import TokenCacheClient

/// `token(for:refresh:)` end to end against a fake token endpoint: hit, refresh with rotation, proactive refresh,
/// interaction required, and the races a refresh can meet.
@Suite struct SilentFlowTests {
    @Test func aStoredTokenIsReturnedWithoutCallingTheEndpoint() async throws {
        try await withSignedInClient() { (client, endpoint, clock) async throws in
            let token = try await client.token(for: User.request(), refresh: endpoint.redeem)
            #expect(token.value == "at-1")
            #expect(token.source == .cache)
            #expect(token.expiresOn == clock.now() + 3600)
            #expect(!token.refreshRecommended)
            #expect(endpoint.redeemed.isEmpty)
            let account = try #require(try token.account)
            #expect(account.username == User.username)
            #expect(account.claims.name == "Adele Vance")
            #expect(account.claims.objectID == User.uid)
            #expect(account.claims.tenantID == User.utid)
            #expect(account.claims["groups"] == .array([.string("g1")]))
            #expect(client.statistics.cacheHits == 1)
        }
    }

    @Test func anExpiredTokenIsRefreshedAndTheRefreshTokenRotated() async throws {
        try await withSignedInClient() { (client, endpoint, clock) async throws in
            clock.advance(by: 3600 - 299)  // less than the 300 s margin left
            let token = try await client.token(for: User.request(), refresh: endpoint.redeem)
            #expect(token.value == "at-2")
            #expect(token.source == .refresh)
            #expect(endpoint.redeemed == ["rt-1"])
            let stored = try #require(try await client.lookup(User.request()).refreshToken)
            #expect(stored.entity.secret.reveal() == "rt-2")
            // The next call is answered by the cache, and a later refresh redeems the rotated token.
            #expect(try await client.token(for: User.request(), refresh: endpoint.redeem).source == .cache)
            clock.advance(by: 3600)
            #expect(try await client.token(for: User.request(), refresh: endpoint.redeem).value == "at-3")
            #expect(endpoint.redeemed == ["rt-1", "rt-2"])
        }
    }

    @Test func aHundredConcurrentCallersShareOneRefresh() async throws {
        try await withSignedInClient(holdingAnswers: true) { (client, endpoint, clock) async throws in
            clock.advance(by: 7200)
            let values = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<100 {
                    // Spelled differently, asked for the same: one flight.
                    let scopes = index.isMultiple(of: 2) ? ["User.Read"] : ["user.read", "openid"]
                    group.addTask { try await client.token(for: User.request(scopes: scopes), refresh: endpoint.redeem).value }
                }
                // The endpoint answers once every caller has asked, so all of them meet the refresh in flight.
                try await waitUntil("every caller asked") { client.statistics.tokenRequests == 100 }
                endpoint.answer()
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(values == Array(repeating: "at-2", count: 100))
            #expect(endpoint.redeemed == ["rt-1"])
            let statistics = client.statistics
            #expect(statistics.refreshes == 1)
            // The others joined the refresh, or (started after it ended, on a loaded machine) found its token.
            #expect(statistics.joinedRefreshes + statistics.cacheHits == 99)
        }
    }

    /// A request with an extended cache key (an FMI path, say) is a partition of its own: the signed-in token does not
    /// answer it, its refresh stores the new token under its key, and the plain request still gets its own token, from
    /// the cache and from the L1, never the other's.
    @Test func anExtendedCacheKeyIsAPartitionOfItsOwn() async throws {
        try await withSignedInClient() { (client, endpoint, _) async throws in
            var extended = User.request()
            extended.extendedCacheKey = ExtendedCacheKey(parameters: ["fmi_path": "Agents/agent-1"])
            #expect(extended.flightKey != User.request().flightKey)
            let fresh = try await client.token(for: extended, refresh: endpoint.redeem)
            #expect(fresh.source == .refresh && fresh.value == "at-2")
            let stored = try #require(try await client.lookup(extended).accessToken)
            #expect(stored.entity.extendedCacheKey == extended.extendedCacheKey?.value)
            for _ in 0..<2 {  // the second time from the L1
                #expect(try await client.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
                #expect(try await client.token(for: extended, refresh: endpoint.redeem).value == "at-2")
            }
            #expect(endpoint.redeemed == ["rt-1"])
        }
    }

    /// A web API's requests for two callers (on-behalf-of partitions): the signed-in user's own token answers neither,
    /// each partition's expired token is refreshed with its own refresh token and stored back in it, and the L1 and the
    /// flights keep them apart.
    @Test func onBehalfOfPartitionsRefreshWithinThemselves() async throws {
        try await withSignedInClient() { (client, endpoint, clock) async throws in
            let a = OnBehalfOfKey(assertion: Secret("assertion-of-caller-a")), b = OnBehalfOfKey(assertion: Secret("assertion-of-caller-b"))
            var requestA = User.request(), requestB = User.request()
            requestA.onBehalfOf = a
            requestB.onBehalfOf = b
            #expect(requestA.flightKey != requestB.flightKey && requestA.flightKey != User.request().flightKey)
            // No partition token yet: a partition never borrows the account's own refresh token.
            await #expect(throws: TokenClientError.self) { try await client.token(for: requestA, refresh: endpoint.redeem) }
            #expect(endpoint.redeemed.isEmpty)
            for (partition, label) in [(a, "a"), (b, "b")] {
                let exchanged = Responses.response(accessToken: "at-\(label)", refreshToken: "rt-obo-\(label)", issuedAt: clock.now())
                let context = TokenRequestContext(
                    clientID: User.client, authority: User.authority, requestedScopes: ["User.Read"],
                    grantType: "urn:ietf:params:oauth:grant-type:jwt-bearer", now: clock.now(), onBehalfOf: partition
                )
                _ = try await client.ingest(exchanged, context: context)
            }
            #expect(try await client.token(for: requestA, refresh: endpoint.redeem).value == "at-a")
            #expect(try await client.token(for: requestB, refresh: endpoint.redeem).value == "at-b")
            #expect(try await client.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
            clock.advance(by: 3600)
            endpoint.accept("rt-obo-a")
            let refreshed = try await client.token(for: requestA, refresh: endpoint.redeem)
            #expect(refreshed.source == .refresh && endpoint.redeemed == ["rt-obo-a"])
            let stored = try #require(try await client.lookup(requestA).refreshToken)
            #expect(stored.entity.userAssertionHash == a.value && stored.entity.secret.reveal() != "rt-obo-a")
            #expect(try await client.lookup(requestB).refreshToken?.entity.secret.reveal() == "rt-obo-b")
            #expect(try await client.token(for: requestA, refresh: endpoint.redeem).value == refreshed.value)
        }
    }

    @Test func differentScopesAreDifferentFlights() async throws {
        try await withSignedInClient() { (client, endpoint, clock) async throws in
            #expect(User.request(scopes: ["User.Read"]).flightKey == User.request(scopes: ["openid USER.READ", "user.read"]).flightKey)
            #expect(User.request(scopes: ["User.Read"]).flightKey != User.request(scopes: ["Mail.Read"]).flightKey)
            #expect(User.request(scopes: ["User.Read"]).flightKey != User.request(scopes: ["User.Read"], forceRefresh: true).flightKey)
        }
    }

    /// The flight key treats two requests as one exactly when the store does: ASCII case folds, Unicode case does
    /// not. The Kelvin sign (U+212A) lower-cases to an ASCII `k` under Unicode rules, so a request the store refuses
    /// would otherwise share a refresh (and get its token) with a valid one.
    @Test func theFlightKeyFoldsCaseAsTheStoreDoes() throws {
        let valid = User.request(scopes: ["Key.Read"], forceRefresh: true)
        let kelvin = User.request(scopes: ["\u{212A}ey.Read"], forceRefresh: true)
        #expect(valid.flightKey != kelvin.flightKey)
        #expect(valid.flightKey == User.request(scopes: ["KEY.READ offline_access"], forceRefresh: true).flightKey)
        #expect(User.request(scopes: ["\u{C4}pi.Read"]).flightKey != User.request(scopes: ["\u{E4}pi.read"]).flightKey)
        var unicodeClient = valid
        unicodeClient.clientID = User.client.uppercased() + "\u{212A}"
        var asciiClient = valid
        asciiClient.clientID = User.client.uppercased() + "K"
        #expect(unicodeClient.flightKey != asciiClient.flightKey)
        asciiClient.clientID = User.client + "k"
        #expect(User.request(scopes: ["Key.Read"], forceRefresh: true).flightKey == valid.flightKey)
    }

    @Test func aRequestTheStoreRefusesSharesNoRefreshWithAValidOne() async throws {
        try await withSignedInClient(holdingAnswers: true) { (client, endpoint, clock) async throws in
            // The Kelvin sign lower-cases to `k` under Unicode rules: a fold by those would make the two one refresh.
            async let valid = client.token(for: User.request(scopes: ["Key.Read"], forceRefresh: true), refresh: endpoint.redeem)
            await endpoint.redemptionBegan.wait()
            let refused = await #expect(throws: TokenCacheError.self) {
                try await client.token(for: User.request(scopes: ["\u{212A}ey.Read"], forceRefresh: true), refresh: endpoint.redeem)
            }
            #expect(refused?.code == .invalidArgument)
            endpoint.answer()
            #expect(try await valid.value == "at-2")
        }
    }

    @Test func aRefreshErrorReachesEveryWaitingCallerUnchanged() async throws {
        try await withSignedInClient(holdingAnswers: true) { (client, endpoint, clock) async throws in
            clock.advance(by: 7200)
            endpoint.failNextRedemption()
            let outcomes = try await withThrowingTaskGroup(of: (any Error)?.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        do { _ = try await client.token(for: User.request(), refresh: endpoint.redeem) } catch { return error }
                        return nil
                    }
                }
                try await waitUntil("every caller asked") { client.statistics.tokenRequests == 10 }
                endpoint.answer()
                return try await group.reduce(into: [(any Error)?]()) { $0.append($1) }
            }
            #expect(outcomes.allSatisfy { ($0 as? FakeTokenEndpoint.Unavailable) != nil })
            #expect(endpoint.redeemed == ["rt-1"])
            #expect(client.statistics.failedRefreshes == 1)
            // Nothing was lost: the same refresh token works on the next call.
            #expect(try await client.token(for: User.request(), refresh: endpoint.redeem).value == "at-2")
        }
    }

    /// The cancelled caller returns while the endpoint still holds the refresh it started (so, at once: a caller that
    /// waited for the refresh would never return, and the time limit fails the test); the refresh goes on for the
    /// other, whose endpoint would fail a cancelled one.
    @Test(.timeLimit(.minutes(10))) func aCancelledCallerDoesNotCancelTheRefreshOthersWaitFor() async throws {
        try await withSignedInClient(holdingAnswers: true) { (client, endpoint, clock) async throws in
            clock.advance(by: 7200)
            let first = Task { try await client.token(for: User.request(), refresh: endpoint.redeem) }
            await endpoint.redemptionBegan.wait()
            let second = Task { try await client.token(for: User.request(), refresh: endpoint.redeem) }
            try await waitUntil("the second caller asked") { client.statistics.tokenRequests == 2 }
            first.cancel()
            let cancelled = await first.result
            #expect(throws: CancellationError.self) { try cancelled.get() }
            endpoint.answer()
            #expect(try await second.value.value == "at-2")
            #expect(endpoint.redeemed == ["rt-1"])
        }
    }

    @Test func aTokenPastRefreshOnIsReturnedAndRefreshedInTheBackground() async throws {
        try await withSignedInClient(holdingAnswers: true, refreshIn: 1800) { (client, endpoint, clock) async throws in
            clock.advance(by: 1801)
            let tokens = try await withThrowingTaskGroup(of: TokenResult.self) { group in
                for _ in 0..<20 { group.addTask { try await client.token(for: User.request(), refresh: endpoint.redeem) } }
                return try await group.reduce(into: [TokenResult]()) { $0.append($1) }
            }
            // Every caller got the still-valid token while the refresh was held at the endpoint; one refresh started.
            #expect(tokens.allSatisfy { $0.value == "at-1" && $0.refreshRecommended && $0.source == .cache })
            endpoint.answer()
            await client.waitForRefreshes()
            #expect(endpoint.redeemed == ["rt-1"])
            #expect(client.statistics.backgroundRefreshes == 1)
            let next = try await client.token(for: User.request(), refresh: endpoint.redeem)
            #expect(next.value == "at-2")
            #expect(!next.refreshRecommended)
        }
    }

    @Test func forceRefreshRedeemsDespiteAStoredToken() async throws {
        try await withSignedInClient() { (client, endpoint, clock) async throws in
            let token = try await client.token(for: User.request(forceRefresh: true), refresh: endpoint.redeem)
            #expect(token.value == "at-2")
            #expect(token.source == .refresh)
            #expect(endpoint.redeemed == ["rt-1"])
        }
    }

    @Test func noRefreshTokenMeansInteractionRequiredWithTheAccountHint() async throws {
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        try await withClient(clock: clock) { client in
            // Never signed in: no hint beyond the id asked for.
            let unknown = await #expect(throws: TokenClientError.self) { try await client.token(for: User.request(), refresh: endpoint.redeem) }
            #expect(unknown?.code == .interactionRequired)
            #expect(unknown?.accountHint == TokenClientError.AccountHint(homeAccountID: User.home, username: nil))
            // Signed in, then the refresh token was lost: the hint names the user to pre-fill.
            try await client.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
            let lookup = try await client.lookup(User.request(scopes: ["Mail.Read"]))
            let refreshToken = try #require(try lookup.refreshToken)
            try client.store.delete(refreshToken.entity.key)
            clock.advance(by: 7200)
            let known = await #expect(throws: TokenClientError.self) { try await client.token(for: User.request(), refresh: endpoint.redeem) }
            #expect(known?.code == .interactionRequired)
            #expect(known?.accountHint?.username == User.username)
            #expect(endpoint.redeemed.isEmpty)
            // No identifier in what an app would log.
            for error in [unknown, known].compactMap({ $0 }) {
                var dumped = ""
                dump(error, to: &dumped)
                for text in [error.description, error.localizedDescription, "\(error)", dumped, String(describing: error.accountHint)] {
                    #expect(!text.contains(User.uid) && !text.contains(User.username))
                }
            }
        }
    }

    @Test func aRotationByAnotherWriterDuringTheRefreshIsKept() async throws {
        try await withSignedInClient() { (client, endpoint, clock) async throws in
            clock.advance(by: 7200)
            let token = try await client.token(for: User.request()) { refreshToken, scopes in
                // Another process redeems the same token first and stores its rotation.
                let stored = try #require(try client.store.silentLookup(User.request().query(now: clock.now())).refreshToken)
                var rotated = stored.entity
                rotated.secret = Secret("rt-other")
                try client.store.replaceRefreshToken(rotated, expectedSecret: refreshToken)
                return try await endpoint.redeem(refreshToken, scopes: scopes)
            }
            #expect(token.value == "at-2")
            let stored = try #require(try await client.lookup(User.request()).refreshToken)
            #expect(stored.entity.secret.reveal() == "rt-other")
        }
    }

    @Test func aSignOutDuringTheRefreshWinsAndNothingIsStored() async throws {
        try await withSignedInClient() { (client, endpoint, clock) async throws in
            clock.advance(by: 7200)
            let error = await #expect(throws: TokenClientError.self) {
                try await client.token(for: User.request()) { refreshToken, scopes in
                    try await client.signOut(homeAccountID: User.home, clientID: nil)
                    return try await endpoint.redeem(refreshToken, scopes: scopes)
                }
            }
            #expect(error?.code == .interactionRequired)
            #expect(try await client.accounts().isEmpty)
            let counts = try client.store.read { try $0.counts() }
            #expect(counts[.accessToken] == 0 && counts[.refreshToken] == 0 && counts[.idToken] == 0 && counts[.account] == 0)
        }
    }

    @Test func aClientMadeWithItsRefreshClosureNeedsNoneAtTheCall() async throws {
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        try await withClient(clock: clock) { plain in
            try await plain.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
            let client = TokenClient(store: plain.store, clock: clock, refresh: endpoint.redeem)
            #expect(try await client.token(for: User.request()).value == "at-1")
            clock.advance(by: 7200)
            #expect(try await client.token(for: User.request()).value == "at-2")
            // Without one, a hit still works and a refresh says what is missing.
            #expect(try await plain.token(for: User.request()).value == "at-2")
            clock.advance(by: 7200)
            let error = await #expect(throws: TokenClientError.self) { try await plain.token(for: User.request()) }
            #expect(error?.code == .refreshNotConfigured)
            #expect(endpoint.redeemed == ["rt-1"])
        }
    }

    @Test func aRefusedRefreshTokenNamesTheAccountToSignInAgain() async throws {
        try await withSignedInClient() { (client, endpoint, clock) async throws in
            clock.advance(by: 7200)
            let error = await #expect(throws: TokenClientError.self) {
                try await client.token(for: User.request()) { _, _ in throw TokenClientError.interactionRequired() }
            }
            #expect(error?.code == .interactionRequired)
            #expect(error?.accountHint == TokenClientError.AccountHint(homeAccountID: User.home, username: User.username))
        }
    }

    /// A token endpoint slower than the lease: the holder renews it while it waits, so the other client (another
    /// process, in life) waits for the result instead of redeeming the same token a second time. Leases count real
    /// time (they coordinate processes), so the endpoint holds its answer for three lease lengths of it. In a process
    /// of its own: renewals (every third of a lease) must run on time, and other tests can hold this process's pool
    /// for seconds.
    @Test func aRedemptionSlowerThanTheLeaseKeepsItsLease() async throws {
        await #expect(processExitsWith: .success) {
            let lease = Duration.seconds(1)
            let clock = TestClock()
            let endpoint = FakeTokenEndpoint(clock: clock, holdingAnswers: true)
            try await withClient(clock: clock) { first in
                try await first.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
                clock.advance(by: 7200)
                let holder = TokenClient(store: first.store, clock: clock, refreshLeaseDuration: lease)
                let waiter = TokenClient(store: first.store, clock: clock, refreshLeaseDuration: lease)
                let a = Task { try await holder.token(for: User.request(), refresh: endpoint.redeem) }
                // The holder has the lease once it redeems; the waiter then finds it taken.
                await endpoint.redemptionBegan.wait()
                let b = Task { try await waiter.token(for: User.request(), refresh: endpoint.redeem) }
                try await waitUntil("the waiter waits for the lease") { waiter.statistics.leaseWaits == 1 }
                try await Task.sleep(for: lease * 3)
                endpoint.answer()
                guard try await a.value.value == "at-2", try await b.value.value == "at-2" else { exit(2) }
                guard endpoint.redeemed == ["rt-1"] else { exit(3) }
                guard waiter.statistics.leaseWaits == 1 else { exit(4) }
            }
        }
    }
}
