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

    /// Runs `condition` every 5 ms until it holds, failing the test after `bound`.
    static func within(_ bound: Duration, _ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + bound
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw StateNotReached(description: "not reached within \(bound): \(what)") }
            try await Task.sleep(for: .milliseconds(5))
        }
    }
}
