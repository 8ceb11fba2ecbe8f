import Foundation
import TestSupport
import Testing
import TokenCache
import TokenCachePostgreSQL

@testable import TokenCacheClient

/// The L1 on a shared store: it answers repeats while no host changed the store, and stops answering for a token
/// another host removed as soon as that host's change notification arrives.
@Suite(.enabled(if: PostgreSQLTestServer.url != nil, "needs the run's PostgreSQL server (make test starts one)"))
struct SharedStoreAnswerCacheTests {
    @Test func anotherHostsSignOutEndsTheL1sAnswerAtOnce() async throws {
        let root = try makeTemporaryDirectory(prefix: "token-cache-shared-l1")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeyFile.create(at: root + "/key")
        let configuration = try Configuration.sharedStore(try #require(PostgreSQLTestServer.uniqueStoreURL("l1")), keySource: .keyFile(path: root + "/key"))
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        let first = try TokenClient(configuration: configuration, clock: clock)
        try await first.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        let second = try TokenClient(configuration: configuration, clock: clock)
        #expect(try await first.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
        // Once its change listener is up, the first host answers repeats from its L1.
        try await Self.within(.seconds(10), "the first host's L1 answers") {
            _ = try await first.token(for: User.request(), refresh: endpoint.redeem)
            return first.statistics.answerCacheHits > 0
        }
        let hits = first.statistics.answerCacheHits
        #expect(try await first.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
        #expect(first.statistics.answerCacheHits == hits + 1)
        // The second host signs the user out. Once its notification is in, the first host's L1 no longer answers.
        let signedOut = ContinuousClock.now
        _ = try await second.signOut(homeAccountID: User.home, clientID: nil)
        try await Self.within(.seconds(10), "the first host stops answering with the removed token") {
            do {
                _ = try await first.token(for: User.request()) { _, _ in throw FakeTokenEndpoint.InvalidGrant() }
                return false
            } catch {
                return true
            }
        }
        let delay = ContinuousClock.now - signedOut
        #expect(delay < .seconds(2), "the first host served the removed token for \(delay)")
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
        let direct = try TokenClient(configuration: try Configuration.sharedStore(url, keySource: keys), clock: clock)
        try await direct.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        let cutOff = try TokenClient(configuration: try Configuration.sharedStore(proxied, keySource: keys, timeout: .seconds(1)), clock: clock)
        try await Self.within(.seconds(10), "the host's L1 answers") {
            _ = try await cutOff.token(for: User.request(), refresh: endpoint.redeem)
            return cutOff.statistics.answerCacheHits > 0
        }
        proxy.cut()
        // The valid token it holds is served, at once.
        let hits = cutOff.statistics.answerCacheHits
        let served = ContinuousClock.now
        #expect(try await cutOff.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
        #expect(cutOff.statistics.answerCacheHits == hits + 1 && ContinuousClock.now - served < .milliseconds(500))
        // What needs the server fails within the deadline, typed, and nothing is redeemed without a lease.
        let redeemed = endpoint.redeemed.count
        let asked = ContinuousClock.now
        await #expect(throws: (any Error).self) { _ = try await cutOff.token(for: User.request(scopes: ["Mail.Read"]), refresh: endpoint.redeem) }
        #expect(ContinuousClock.now - asked < .seconds(4) && endpoint.redeemed.count == redeemed)
        do { _ = try await cutOff.lookup(User.request(scopes: ["Mail.Read"])) } catch {
            #expect("\(error)".contains("storeUnavailable"), "\(error)")
        }
        // Meanwhile the other host signs the user out. Back, the cut-off host converges: the token is no longer served.
        _ = try await direct.signOut(homeAccountID: User.home, clientID: nil)
        proxy.restore()
        let back = ContinuousClock.now
        try await Self.within(.seconds(10), "the host back stops serving the removed token") {
            do {
                _ = try await cutOff.token(for: User.request()) { _, _ in throw FakeTokenEndpoint.InvalidGrant() }
                return false
            } catch {
                return true
            }
        }
        #expect(ContinuousClock.now - back < .seconds(5), "converged after \(ContinuousClock.now - back)")
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
