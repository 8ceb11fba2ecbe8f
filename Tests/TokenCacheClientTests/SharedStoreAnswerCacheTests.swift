import Foundation
import TestSupport
import Testing
import TokenCache
import TokenCachePostgreSQL
import Logging
import MetricsTestKit

@testable import TokenCacheClient

/// The L1 on a shared store: it answers repeats while no host changed the store, and stops answering for a token
/// another host removed as soon as that host's change notification arrives.
@Suite(.enabled(if: PostgreSQLTestServer.url != nil, "needs the run's PostgreSQL server (make test starts one)"))
struct SharedStoreAnswerCacheTests {
    @Test func anotherHostsSignOutEndsTheL1sAnswerAtOnce() async throws {
        let root = try makeTemporaryDirectory(prefix: "token-cache-shared-l1")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeyFile.create(at: root + "/key")
        let configuration = try Configuration.sharedStore(try #require(PostgreSQLTestServer.uniqueStoreURL("l1")), keySource: .keyFile(path: root + "/key"), timeout: PostgreSQLTestServer.timeout)
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        let first = try TokenClient(configuration: configuration, clock: clock)
        try await first.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        let second = try TokenClient(configuration: configuration, clock: clock)
        #expect(try await first.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
        // Once its change listener is up, the first host answers repeats from its L1.
        try await Self.within(Self.bound, "the first host's L1 answers") {
            _ = try await first.token(for: User.request(), refresh: endpoint.redeem)
            return first.statistics.answerCacheHits > 0
        }
        let hits = first.statistics.answerCacheHits
        #expect(try await first.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
        #expect(first.statistics.answerCacheHits == hits + 1)
        // The second host signs the user out. Once its notification is in, the first host's L1 no longer answers.
        _ = try await second.signOut(homeAccountID: User.home, clientID: nil)
        try await Self.awaitRemoval(from: first, "the first host stops answering with the removed token")
    }

    /// A host cut off from the server keeps serving the access tokens its L1 holds (not near expiry), fails what
    /// needs the server within its deadline with `storeUnavailable`, and, back, drops what changed meanwhile.
    @Test func aHostCutOffServesItsL1FailsTheRestWithinTheDeadlineAndConvergesWhenBack() async throws {
        let root = try makeTemporaryDirectory(prefix: "token-cache-cut")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeyFile.create(at: root + "/key")
        let url = try #require(PostgreSQLTestServer.uniqueStoreURL("cut"))
        let server = try #require(try PostgreSQLTestServer.socketPath())
        let proxy = try UnixSocketProxy(listeningAt: root + "/.s.PGSQL.5432", forwardingTo: server)
        let proxied = try PostgreSQLTestServer.url(url, throughSocketDirectory: root)
        let keys = KeySource.keyFile(path: root + "/key")
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        let direct = try TokenClient(configuration: try Configuration.sharedStore(url, keySource: keys, timeout: PostgreSQLTestServer.timeout), clock: clock)
        try await direct.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        let cutOff = try TokenClient(configuration: try Configuration.sharedStore(proxied, keySource: keys, timeout: .seconds(2)), clock: clock)
        try await Self.within(Self.bound, "the host's L1 answers") {
            _ = try await cutOff.token(for: User.request(), refresh: endpoint.redeem)
            return cutOff.statistics.answerCacheHits > 0
        }
        proxy.cut()
        // The valid token it holds is served, at once.
        let hits = cutOff.statistics.answerCacheHits
        #expect(try await cutOff.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
        #expect(cutOff.statistics.answerCacheHits == hits + 1)
        // What needs the server fails within the deadline, typed, and nothing is redeemed without a lease.
        let redeemed = endpoint.redeemed.count
        await #expect(throws: (any Error).self) { _ = try await cutOff.token(for: User.request(scopes: ["Mail.Read"]), refresh: endpoint.redeem) }
        #expect(endpoint.redeemed.count == redeemed)
        do { _ = try await cutOff.lookup(User.request(scopes: ["Mail.Read"])) } catch {
            #expect("\(error)".contains("storeUnavailable"), "\(error)")
        }
        // Meanwhile the other host signs the user out. Back, the cut-off host converges: the token is no longer served.
        _ = try await direct.signOut(homeAccountID: User.home, clientID: nil)
        proxy.restore()
        try await Self.awaitRemoval(from: cutOff, "the host back stops serving the removed token")
    }

    /// What an operator sees: the listener's gauge up once it listens, an invalidation counted for another host's
    /// change and one for the listener's connect, and no identifier in any log line.
    @Test func theStoreReportsItsListenerInvalidationsAndConflicts() async throws {
        let root = try makeTemporaryDirectory(prefix: "token-cache-shared-metrics")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeyFile.create(at: root + "/key")
        let url = try #require(PostgreSQLTestServer.uniqueStoreURL("metrics"))
        let metrics = TestMetrics()
        let records = ObservabilityTests.Records()
        let observed = try Configuration.sharedStore(
            url, keySource: .keyFile(path: root + "/key"), timeout: PostgreSQLTestServer.timeout, logger: Logger(label: "shared") { _ in ObservabilityTests.CapturingHandler(records: records) },
            metricsFactory: metrics
        )
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        let host = try TokenClient(configuration: observed, clock: clock)
        try await host.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        _ = host.store.lastCommitID  // starts the listener
        try await Self.within(Self.bound, "the listener connects") {
            (try? metrics.expectGauge("token_cache_shared_store_listening").lastValue) == 1
        }
        let other = try TokenStore.open(try Configuration.sharedStore(url, keySource: .keyFile(path: root + "/key"), timeout: PostgreSQLTestServer.timeout))
        try other.put(AppMetadata(clientID: "another-client", environment: User.cloud))
        try await Self.within(Self.bound, "another host's change is counted") {
            ((try? metrics.expectCounter("token_cache_shared_store_invalidations_total", [("cause", "notification")]).totalValue) ?? 0) > 0
        }
        #expect(try metrics.expectCounter("token_cache_shared_store_invalidations_total", [("cause", "reconnect")]).totalValue == 1)
        for line in records.all {
            for secret in ["at-1", "rt-1", User.username, User.uid, User.client] { #expect(!line.contains(secret), "\(line)") }
        }
        #expect(records.all.contains { $0.contains("change listener connected") && $0.contains("postgresql://") })
    }

    /// How long a condition may take to hold here: these tests run beside every other suite on a loaded 2-core
    /// machine, whose cooperative pool the synchronous tests keep busy, so they check that a thing happens, not how
    /// soon (the benchmark measures that). Bounded, so that nothing waits for ever.
    static let bound: Duration = .seconds(120)

    /// Waits until `client` no longer answers with the signed-out user's token (a redemption would be refused).
    static func awaitRemoval(from client: TokenClient, _ what: String) async throws {
        try await within(bound, what) {
            do {
                _ = try await client.token(for: User.request()) { _, _ in throw FakeTokenEndpoint.InvalidGrant() }
                return false
            } catch {
                return true
            }
        }
    }

    /// Runs `condition` every 5 ms until it holds, failing the test after `bound`.
    static func within(_ bound: Duration, _ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + bound
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw StateNotReached(description: "not reached within \(bound): \(what)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
