import Foundation
import MetricsTestKit
import TestSupport
import Testing
import TokenCache
import TokenCachePostgreSQL

@testable import TokenCacheClient

/// A redeemed response whose store fails because the shared store's server cannot be reached is not dropped: the
/// client stores it once the server is back, and meanwhile never redeems the token it rotated again.
///
/// The host reaches the server through a ``UnixSocketProxy`` that the refresh closure cuts once the token endpoint
/// has answered: the redemption succeeded (the endpoint rotated the token), the store that follows cannot reach the
/// server.
@Suite(.enabled(if: PostgreSQLTestServer.url != nil, "needs the run's PostgreSQL server (make test starts one)"))
struct LateStoreTests {
    /// One host cut off through its proxy, one reaching the server directly, one endpoint counting redemptions.
    struct Farm {
        let root: String
        let proxy: UnixSocketProxy
        let clock = TestClock()
        let endpoint: FakeTokenEndpoint
        let metrics = TestMetrics()
        /// Reaches the server directly: what another host sees.
        let direct: TokenClient
        /// Reaches the server through the proxy.
        let host: TokenClient

        init(_ hint: String, leaseDuration: Duration = .seconds(30), pendingStores: PendingStores = PendingStores()) throws {
            root = try makeTemporaryDirectory(prefix: "token-cache-late-\(hint)")
            try KeyFile.create(at: root + "/key")
            let url = try #require(PostgreSQLTestServer.uniqueStoreURL("late"))
            let server = try #require(try PostgreSQLTestServer.socketPath())
            proxy = try UnixSocketProxy(listeningAt: root + "/.s.PGSQL.5432", forwardingTo: server)
            let keys = KeySource.keyFile(path: root + "/key")
            endpoint = FakeTokenEndpoint(clock: clock)
            direct = try TokenClient(configuration: try Configuration.sharedStore(url, keySource: keys, timeout: PostgreSQLTestServer.timeout), clock: clock)
            let proxied = try Configuration.sharedStore(
                try PostgreSQLTestServer.url(url, throughSocketDirectory: root), keySource: keys, timeout: .seconds(2)
            )
            host = TokenClient(
                store: try TokenStore.openOrCreate(proxied), clock: clock, refreshLeaseDuration: leaseDuration, answerCacheCapacity: 0,
                changePollInterval: .milliseconds(100), observability: ClientObservability(metricsFactory: metrics), refresh: nil,
                pendingStores: pendingStores
            )
        }

        /// Signs the user in through the direct host, and lets the access token expire: the next request redeems.
        func signInAndExpire() async throws {
            try await direct.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
            clock.advance(by: 3600)
        }

        /// The endpoint's redemption, after which the host is cut off from the server.
        var redeemThenCut: TokenClient.Refresh {
            { [endpoint, proxy] token, scopes in
                let response = try await endpoint.redeem(token, scopes: scopes)
                proxy.cut()
                return response
            }
        }

        /// How many redeemed responses ended as `result` (`retried`, `stored`, `not_wanted`, `given_up`).
        func lateStores(_ result: String) -> Int64 {
            (try? metrics.expectCounter("token_cache_client_late_stores_total", [("result", result)]).totalValue) ?? 0
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    /// The store that failed in the outage is made once the server is back: the other host then serves the rotated
    /// token's access token and redeems the rotated refresh token next; each refresh token is redeemed once.
    @Test func aRedemptionWhoseStoreMetAnOutageIsStoredOnceTheServerIsBack() async throws {
        let farm = try Farm("outage")
        defer { farm.remove() }
        try await farm.signInAndExpire()
        // The caller gets the typed failure, and does not wait for the retries. How soon is the farm's gate to judge
        // (the outage's answers within the deadline): beside the other suites on a loaded machine, whose cooperative
        // pool the synchronous tests keep busy, a test can only check that it ends.
        let started = ContinuousClock.now
        do {
            _ = try await farm.host.token(for: User.request(), refresh: farm.redeemThenCut)
            Issue.record("the store succeeded through a cut proxy")
        } catch let error as TokenCacheError {
            #expect(error.code == .storeUnavailable, "\(error)")
        }
        #expect(ContinuousClock.now - started < .seconds(120))
        #expect(farm.endpoint.redeemed == ["rt-1"])
        #expect(farm.host.pendingStores.count == 1)
        #expect(farm.lateStores("retried") == 1)
        // Meanwhile a request fails typed, and redeems nothing.
        for forced in [false, true] {
            await #expect(throws: TokenCacheError.self) {
                _ = try await farm.host.token(for: User.request(forceRefresh: forced), refresh: farm.endpoint.redeem)
            }
        }
        #expect(farm.endpoint.redeemed == ["rt-1"])
        // Back: the response is stored.
        farm.proxy.restore()
        await farm.host.waitForPendingStores()
        #expect(farm.host.statistics.storedLate == 1)
        #expect(farm.lateStores("stored") == 1)
        #expect(farm.lateStores("given_up") == 0)
        // Another host serves its access token, and redeems the rotated refresh token next, not the one it replaced.
        #expect(try await farm.direct.token(for: User.request(), refresh: farm.endpoint.redeem).value == "at-2")
        #expect(try await farm.direct.token(for: User.request(forceRefresh: true), refresh: farm.endpoint.redeem).value == "at-3")
        #expect(farm.endpoint.redeemed == ["rt-1", "rt-2"])
    }

    /// Back before the pending store's next attempt, a request for the same token (and one for other scopes, which
    /// would redeem the same refresh token) is answered by that store, tried at once: nothing is redeemed again.
    @Test func aRequestWhileTheStoreIsPendingIsAnsweredByItAndRedeemsNothing() async throws {
        // Pauses longer than the test: only a request's wake-up makes the attempt.
        let farm = try Farm("pending", pendingStores: PendingStores(firstPause: .seconds(3600), longestPause: .seconds(3600)))
        defer { farm.remove() }
        try await farm.signInAndExpire()
        await #expect(throws: TokenCacheError.self) { _ = try await farm.host.token(for: User.request(), refresh: farm.redeemThenCut) }
        #expect(farm.endpoint.redeemed == ["rt-1"])
        farm.proxy.restore()
        #expect(farm.host.pendingStores.count == 1)
        let result = try await farm.host.token(for: User.request(), refresh: farm.endpoint.redeem)
        #expect(result.value == "at-2")
        #expect(farm.endpoint.redeemed == ["rt-1"])
        await farm.host.waitForPendingStores()
        #expect(farm.lateStores("stored") == 1)
        // The rotated token is what the next redemption offers.
        #expect(try await farm.host.token(for: User.request(scopes: ["Mail.Read"]), refresh: farm.endpoint.redeem).value == "at-3")
        #expect(farm.endpoint.redeemed == ["rt-1", "rt-2"])
    }

    /// Another scope's request (another flight, the same refresh token) waits for the pending store too.
    @Test func anotherScopesRequestWhileTheStoreIsPendingRedeemsNothing() async throws {
        let farm = try Farm("scopes", pendingStores: PendingStores(firstPause: .seconds(3600), longestPause: .seconds(3600)))
        defer { farm.remove() }
        try await farm.signInAndExpire()
        await #expect(throws: TokenCacheError.self) { _ = try await farm.host.token(for: User.request(), refresh: farm.redeemThenCut) }
        farm.proxy.restore()
        // The stored response's access token covers User.Read only: Mail.Read needs a redemption, of the rotated token.
        #expect(try await farm.host.token(for: User.request(scopes: ["Mail.Read"]), refresh: farm.endpoint.redeem).value == "at-3")
        #expect(farm.endpoint.redeemed == ["rt-1", "rt-2"])
        #expect(farm.lateStores("stored") == 1)
    }

    /// A store still failing at its bound (the lease's lapse plus a lease's duration) is given up, and counted.
    @Test func aStoreStillFailingAtItsBoundIsGivenUp() async throws {
        let farm = try Farm("bound", leaseDuration: .seconds(1))
        defer { farm.remove() }
        try await farm.signInAndExpire()
        await #expect(throws: TokenCacheError.self) { _ = try await farm.host.token(for: User.request(), refresh: farm.redeemThenCut) }
        #expect(farm.lateStores("retried") == 1)
        let started = ContinuousClock.now
        await farm.host.waitForPendingStores()
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(farm.lateStores("given_up") == 1)
        #expect(farm.lateStores("stored") == 0)
        #expect(farm.host.statistics.lateStoresGivenUp == 1)
        farm.proxy.restore()
    }
}
