import Foundation
import TestSupport
import Testing
import TokenCache
import TokenCachePostgreSQL

@testable import TokenCacheClient

#if canImport(Glibc)
import Glibc
#endif

/// Single flight across processes: processes sharing a store redeem a refresh token once between them, and a
/// process that dies holding the lease holds the others up no longer than the lease lasts. On a directory, and on a
/// shared store on PostgreSQL (where the processes stand for hosts: each has its own connections to the server).
@Suite(.serialized) struct CrossProcessRefreshTests {
    /// The stores the suite runs on: a directory, and a shared store when the run has a server.
    static var stores: [String] { PostgreSQLTestServer.url == nil ? ["directory"] : ["directory", "shared"] }

    /// When the children start: the store's sign-in time, then two hours on (the access token has expired).
    static let signedInAt = ReferenceTime.now

    /// A store with one signed-in user whose access token expired, in a new directory.
    static func expiredStore(_ kind: String) async throws -> String {
        let root = try makeTemporaryDirectory(prefix: "token-cache-lease")
        try KeyFile.create(at: root + "/key")
        // The processes find the shared store's URL (a schema of its own) beside the key.
        if kind == "shared" { try #require(PostgreSQLTestServer.uniqueStoreURL("lease")).write(toFile: root + "/url", atomically: true, encoding: .utf8) }
        let clock = TestClock(signedInAt)
        let client = try TokenClient(configuration: configuration(root), clock: clock)
        try await client.ingest(FakeTokenEndpoint(clock: clock).signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        return root
    }

    static func configuration(_ root: String) -> Configuration {
        if let url = try? String(contentsOfFile: root + "/url", encoding: .utf8) {
            return try! Configuration.sharedStore(url, keySource: .keyFile(path: root + "/key"), timeout: PostgreSQLTestServer.timeout)
        }
        return Configuration(directory: root + "/store", keySource: .keyFile(path: root + "/key"))
    }

    /// A token endpoint shared by processes: each redemption appends the redeemed token to `log`, takes `latency`
    /// and returns an access token named after this process.
    static func redeemLogging(to log: String, latency: Duration) -> TokenClient.Refresh {
        { refreshToken, scopes in
            let line = refreshToken.reveal() + "\n"
            let descriptor = open(log, O_WRONLY | O_APPEND | O_CREAT, 0o600)
            _ = line.withCString { write(descriptor, $0, strlen($0)) }
            close(descriptor)
            try await Task.sleep(for: latency)
            return Responses.response(
                accessToken: "at-from-\(getpid())", refreshToken: "rt-from-\(getpid())", scope: scopes.joined(separator: " "),
                issuedAt: signedInAt + 7200
            )
        }
    }

    @Test(arguments: stores) func fourProcessesOfTwentyFiveCallersRedeemOnce(store kind: String) async throws {
        let root = try await Self.expiredStore(kind)
        defer { try? FileManager.default.removeItem(atPath: root) }
        await withTaskGroup(of: Void.self) { group in
            for child in 0..<4 {
                group.addTask {
                    await #expect(processExitsWith: .success) { [root = root as String, child = child as Int] in
                        let clock = TestClock(CrossProcessRefreshTests.signedInAt + 7200)
                        let client = try TokenClient(configuration: CrossProcessRefreshTests.configuration(root), clock: clock)
                        // The children start together, once all are running: each says it is ready, then waits for the others.
                        try "".write(toFile: root + "/ready-\(child)", atomically: true, encoding: .utf8)
                        try await waitUntil("every child is ready") {
                            (0..<4).allSatisfy { FileManager.default.fileExists(atPath: root + "/ready-\($0)") }
                        }
                        let refresh = CrossProcessRefreshTests.redeemLogging(to: root + "/redeemed", latency: .milliseconds(300))
                        let values = try await withThrowingTaskGroup(of: String.self) { callers in
                            for _ in 0..<25 { callers.addTask { try await client.token(for: User.request(), refresh: refresh).value } }
                            return try await callers.reduce(into: Set<String>()) { $0.insert($1) }
                        }
                        let statistics = client.statistics
                        let report = "\(values.sorted().joined(separator: ",")) refreshes=\(statistics.refreshes) waits=\(statistics.leaseWaits)\n"
                        try report.write(toFile: root + "/child-\(child)", atomically: true, encoding: .utf8)
                    }
                }
            }
        }
        let redeemed = try String(contentsOfFile: root + "/redeemed", encoding: .utf8)
        #expect(redeemed == "rt-1\n")
        let reports = try (0..<4).map { try String(contentsOfFile: root + "/child-\($0)", encoding: .utf8) }
        // Every caller of every process got the one token the one redemption returned.
        let tokens = Set(reports.map { $0.split(separator: " ")[0] })
        #expect(tokens.count == 1)
        #expect(tokens.first?.hasPrefix("at-from-") == true)
        #expect(reports.filter { $0.contains("refreshes=1") }.count == 1)
        // The others waited for the holder's lease, or (started late on a loaded machine) found its token.
        #expect(reports.filter { $0.contains("refreshes=0") }.count == 3)
        // The holder released the lease with its result.
        let store = try TokenStore.open(Self.configuration(root))
        let refreshToken = try #require(try store.silentLookup(User.request().query(now: Self.signedInAt + 7200)).refreshToken)
        #expect(refreshToken.entity.secret.reveal().hasPrefix("rt-from-"))
        #expect(try store.read { try $0.refreshLeaseExpiry(on: refreshToken.entity.key, now: Self.nowMilliseconds()) } == nil)
    }

    @Test(arguments: stores) func aKilledLeaseholderHoldsTheOthersUpNoLongerThanItsLease(store kind: String) async throws {
        let root = try await Self.expiredStore(kind)
        defer { try? FileManager.default.removeItem(atPath: root) }
        // The first process takes the lease and dies inside its refresh, before storing anything.
        await #expect(processExitsWith: .signal(SIGKILL)) { [root = root as String] in
            let clock = TestClock(CrossProcessRefreshTests.signedInAt + 7200)
            let client = try TokenClient(configuration: CrossProcessRefreshTests.configuration(root), clock: clock, refreshLeaseDuration: .seconds(5))
            _ = try await client.token(for: User.request()) { _, _ in
                kill(getpid(), SIGKILL)
                throw CancellationError()
            }
        }
        let refreshToken = try #require(
            try TokenStore.open(Self.configuration(root)).silentLookup(User.request().query(now: Self.signedInAt + 7200)).refreshToken
        )
        // nil when this process was held up past the lapse already (a loaded machine): the next one then need not wait.
        let lease = try TokenStore.open(Self.configuration(root)).read {
            try $0.refreshLeaseExpiry(on: refreshToken.entity.key, now: Self.nowMilliseconds())
        } ?? 0
        // The next process waits for the dead holder's lease to lapse, and not much longer: it polls at least every
        // 50 ms, and ``lapseSlack`` leaves the rest for a loaded machine. Measured in a process of its own, whose tasks
        // no other test holds up.
        await #expect(processExitsWith: .success) { [root = root as String, lease = lease as Int64] in
            let clock = TestClock(CrossProcessRefreshTests.signedInAt + 7200)
            let client = try TokenClient(
                configuration: CrossProcessRefreshTests.configuration(root), clock: clock, refreshLeaseDuration: .seconds(5)
            )
            let started = CrossProcessRefreshTests.nowMilliseconds()
            let token = try await client.token(for: User.request(), refresh: CrossProcessRefreshTests.redeemLogging(to: root + "/redeemed", latency: .zero))
            let finished = CrossProcessRefreshTests.nowMilliseconds()
            guard token.value == "at-from-\(getpid())" else { exit(2) }
            // Started while the lease held (the usual case): it waited for the lapse, and not much longer.
            if started < lease - 100 {
                guard client.statistics.leaseWaits == 1 else { exit(3) }
                guard finished >= lease else { exit(4) }
            }
            guard finished < max(lease, started) + CrossProcessRefreshTests.lapseSlack else { exit(5) }
        }
        #expect(try String(contentsOfFile: root + "/redeemed", encoding: .utf8) == "rt-1\n")
    }

    static func nowMilliseconds() -> Int64 { TokenClient.systemMilliseconds() }

    /// How long past a dead holder's lease the next process may take to finish, in milliseconds: well under the
    /// lease (5 s), so that a waiter that waited a second lease still fails.
    static let lapseSlack: Int64 = 2_500
}
