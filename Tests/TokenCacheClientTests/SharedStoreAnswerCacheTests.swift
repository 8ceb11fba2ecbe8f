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

    /// Answers are kept by bucket: another host's change to one account drops this host's answers for that account
    /// only; its answers for every other account stay in its L1.
    @Test func anotherHostsChangeToOneAccountLeavesTheL1sOtherAnswersStanding() async throws {
        let root = try makeTemporaryDirectory(prefix: "token-cache-shared-buckets")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeyFile.create(at: root + "/key")
        let configuration = try Configuration.sharedStore(
            try #require(PostgreSQLTestServer.uniqueStoreURL("buckets")), keySource: .keyFile(path: root + "/key"), timeout: PostgreSQLTestServer.timeout
        )
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        let first = try TokenClient(configuration: configuration, clock: clock)
        try await first.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        try await first.ingest(endpoint.signIn(username: Self.otherUsername, uid: Self.otherUID), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        let second = try TokenClient(configuration: configuration, clock: clock)
        try await Self.within(Self.bound, "the first host's L1 answers for both accounts") {
            let hits = first.statistics.answerCacheHits
            _ = try await first.token(for: User.request(), refresh: endpoint.redeem)
            _ = try await first.token(for: User.request(home: Self.otherHome), refresh: endpoint.redeem)
            return first.statistics.answerCacheHits == hits + 2
        }
        // The second host signs the other user out: once its notification is in, the first host stops answering
        // for that user, and still answers for the first from its L1, without asking the store.
        _ = try await second.signOut(homeAccountID: Self.otherHome, clientID: nil)
        try await Self.awaitRemoval(from: first, home: Self.otherHome, "the first host stops answering for the signed-out user")
        let (hits, lookups) = (first.statistics.answerCacheHits, Self.lookups(first))
        #expect(try await first.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
        #expect(first.statistics.answerCacheHits == hits + 1 && Self.lookups(first) == lookups)
        // A change to the first user's own account drops its answer too.
        try await second.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["Mail.Read"])
        try await Self.within(Self.bound, "the first host stops answering from its L1 for the changed account") {
            let hits = first.statistics.answerCacheHits
            _ = try await first.token(for: User.request(), refresh: endpoint.redeem)
            return first.statistics.answerCacheHits == hits
        }
    }

    /// A host whose change listener was away reads the buckets' versions when it is back: the answers of accounts
    /// changed meanwhile are dropped, the others kept (served from its L1 at once, without a lookup).
    @Test func aListenerBackKeepsTheAnswersOfAccountsThatDidNotChangeAndDropsTheOthers() async throws {
        let (root, url, proxy, proxied, keys) = try Self.storeBehindAProxy("back")
        defer { try? FileManager.default.removeItem(atPath: root) }
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        let metrics = TestMetrics()
        let direct = try TokenClient(configuration: try Configuration.sharedStore(url, keySource: keys, timeout: PostgreSQLTestServer.timeout), clock: clock)
        try await direct.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        try await direct.ingest(endpoint.signIn(username: Self.otherUsername, uid: Self.otherUID), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        let host = try TokenClient(
            configuration: try Configuration.sharedStore(proxied, keySource: keys, timeout: .seconds(2), metricsFactory: metrics), clock: clock
        )
        try await Self.within(Self.bound, "the host's L1 answers for both accounts") {
            let hits = host.statistics.answerCacheHits
            _ = try await host.token(for: User.request(), refresh: endpoint.redeem)
            _ = try await host.token(for: User.request(home: Self.otherHome), refresh: endpoint.redeem)
            return host.statistics.answerCacheHits == hits + 2
        }
        func listening() -> Double? { try? metrics.expectGauge("token_cache_shared_store_listening").lastValue }
        proxy.cut()
        try await Self.within(Self.bound, "the host finds its listener cut off") { listening() == 0 }
        // While it cannot hear, the other user is signed out.
        _ = try await direct.signOut(homeAccountID: Self.otherHome, clientID: nil)
        proxy.restore()
        try await Self.within(Self.bound, "the listener is back and has read the versions") { listening() == 1 }
        let (hits, lookups) = (host.statistics.answerCacheHits, Self.lookups(host))
        #expect(try await host.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
        #expect(host.statistics.answerCacheHits == hits + 1 && Self.lookups(host) == lookups, "the unchanged account's answer was kept")
        await #expect(throws: TokenClientError.self) {
            _ = try await host.token(for: User.request(home: Self.otherHome)) { _, _ in throw FakeTokenEndpoint.InvalidGrant() }
        }
    }

    /// A new store on the run's server, its key in a new directory `root`, and a URL of it through a proxy in that
    /// directory that a test can cut (a host cut off from the server) and restore.
    static func storeBehindAProxy(_ hint: String) throws -> (root: String, url: String, proxy: UnixSocketProxy, proxied: String, keys: KeySource) {
        let root = try makeTemporaryDirectory(prefix: "token-cache-\(hint)")
        try KeyFile.create(at: root + "/key")
        let url = try #require(PostgreSQLTestServer.uniqueStoreURL(hint))
        let server = try #require(try PostgreSQLTestServer.socketPath())
        let proxy = try UnixSocketProxy(listeningAt: root + "/.s.PGSQL.5432", forwardingTo: server)
        return (root, url, proxy, try PostgreSQLTestServer.url(url, throughSocketDirectory: root), KeySource.keyFile(path: root + "/key"))
    }

    /// The requests `client` answered by asking the store (its requests less its L1's answers).
    static func lookups(_ client: TokenClient) -> Int { client.statistics.tokenRequests - client.statistics.answerCacheHits }

    static let otherUID = "00000000-0000-0000-0000-00000000b0b0"
    static let otherUsername = "bob@contoso.com"
    static var otherHome: String { "\(otherUID).\(User.utid)" }

    /// A change too wide for its notification to name every bucket (`*`) drops every answer.
    @Test func aChangeTooWideToNameDropsEveryAnswer() async throws {
        let root = try makeTemporaryDirectory(prefix: "token-cache-shared-wide")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeyFile.create(at: root + "/key")
        let url = try #require(PostgreSQLTestServer.uniqueStoreURL("wide"))
        let configuration = try Configuration.sharedStore(url, keySource: .keyFile(path: root + "/key"), timeout: PostgreSQLTestServer.timeout)
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        let host = try TokenClient(configuration: configuration, clock: clock)
        try await host.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        try await Self.within(Self.bound, "the host's L1 answers") {
            let hits = host.statistics.answerCacheHits
            _ = try await host.token(for: User.request(), refresh: endpoint.redeem)
            return host.statistics.answerCacheHits == hits + 1
        }
        // Another writer adds records under 400 other buckets in one transaction (rows no lookup here reads).
        let schema = try PostgreSQLAddress(parsing: url).schema
        let psql = Process()
        psql.executableURL = URL(fileURLWithPath: try #require(PostgreSQLTestServer.binDirectory) + "/psql")
        psql.arguments = [
            "--no-psqlrc", "--quiet", "--set", "ON_ERROR_STOP=1", "--dbname", try #require(PostgreSQLTestServer.url), "--command",
            "INSERT INTO \"\(schema)\".records (space, key, value) SELECT 1, decode(lpad(to_hex(n), 32, '0') || repeat('ee', 16), 'hex'), '\\x00' FROM generate_series(1, 400) AS n",
        ]
        try psql.run()
        psql.waitUntilExit()
        #expect(psql.terminationStatus == 0)
        try await Self.within(Self.bound, "the host's L1 stops answering") {
            let lookups = Self.lookups(host)
            _ = try await host.token(for: User.request(), refresh: endpoint.redeem)
            return Self.lookups(host) == lookups + 1
        }
    }

    /// A host cut off from the server keeps serving the access tokens its L1 holds (not near expiry), fails what
    /// needs the server within its deadline with `storeUnavailable`, and, back, drops what changed meanwhile.
    @Test func aHostCutOffServesItsL1FailsTheRestWithinTheDeadlineAndConvergesWhenBack() async throws {
        let (root, url, proxy, proxied, keys) = try Self.storeBehindAProxy("cut")
        defer { try? FileManager.default.removeItem(atPath: root) }
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
        // The heartbeat's round trip on the listener's connection, every second: how far behind the listener is.
        try await Self.within(Self.bound, "the listener's lag is measured") {
            ((try? metrics.expectTimer("token_cache_shared_store_listener_lag").values.count) ?? 0) > 0
        }
        let lag = try #require(try metrics.expectTimer("token_cache_shared_store_listener_lag").lastValue)
        #expect(lag > 0 && lag < 60_000_000_000, "\(lag) ns")
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
    static func awaitRemoval(from client: TokenClient, home: String = User.home, _ what: String) async throws {
        try await within(bound, what) {
            do {
                _ = try await client.token(for: User.request(home: home)) { _, _ in throw FakeTokenEndpoint.InvalidGrant() }
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
