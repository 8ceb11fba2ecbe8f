import Foundation
import Synchronization
import TestSupport
import Testing
import TokenCache

@testable import TokenCacheClient

/// Requests the app obtains without the user (``TokenClient/token(for:acquire:)``): app tokens by client credentials,
/// per tenant and per extended cache key, and a web API's on-behalf-of tokens per caller — one acquisition per process
/// and across processes (the acquisition lease), the L1, forced requests, failures, and the refresh token an
/// on-behalf-of partition keeps.
@Suite struct AcquisitionTests {
    static let resource = ["https://graph.microsoft.com/.default"]

    /// The web API's tenant: the signed-in user's, so that the exchanged tokens (whose ID token names it) land there.
    static let userTenant = tenant(User.utid)

    static func tenant(_ name: String) -> Authority { try! Authority("https://login.microsoftonline.com/\(name)") }

    /// A client-credentials token endpoint in memory: counts its calls, names each token after the call, and holds its
    /// answers until told (so that a test orders callers by what they do, not by sleeps) if asked to.
    final class AppEndpoint: Sendable {
        struct Refused: Error, Equatable {}
        private let calls = Mutex<[String]>([])
        let gate = Latch()
        let failing: Bool

        init(holding: Bool = false, failing: Bool = false) {
            self.failing = failing
            if !holding { gate.open() }
        }

        /// The acquire closure of a request labelled `label` (its tenant, its FMI path, its caller).
        func acquire(_ label: String, refreshToken: String? = nil) -> TokenClient.Acquire {
            { scopes in
                let number = self.calls.withLock { calls in
                    calls.append(label)
                    return calls.count
                }
                await self.gate.wait()
                if self.failing { throw Refused() }
                let json = Responses.json(
                    accessToken: "at-\(label)-\(number)", scope: scopes.joined(separator: " "), refreshToken: refreshToken.map { "\($0)-\(number)" },
                    idToken: refreshToken == nil ? nil : Responses.idToken(), clientInfo: refreshToken == nil ? nil : Responses.clientInfo()
                )
                return try TokenResponse(json: json)
            }
        }

        var called: [String] { calls.withLock { $0 } }
    }

    @Test func anAppTokenIsAcquiredOncePerTenantAndThenServedFromTheCache() async throws {
        try await withClient { client async throws in
            let endpoint = AppEndpoint(holding: true)
            let request = TokenRequest.app(clientID: User.client, authority: Self.tenant("contoso.onmicrosoft.com"), scopes: Self.resource)
            let results = try await withThrowingTaskGroup(of: TokenResult.self) { group in
                for _ in 0..<50 { group.addTask { try await client.token(for: request, acquire: endpoint.acquire("contoso")) } }
                try await waitUntil("every caller asked") { client.statistics.tokenRequests == 50 }
                endpoint.gate.open()
                return try await group.reduce(into: [TokenResult]()) { $0.append($1) }
            }
            #expect(Set(results.map(\.value)) == ["at-contoso-1"])
            #expect(endpoint.called == ["contoso"])
            #expect(results.contains { $0.source == .acquired })
            let statistics = client.statistics
            #expect(statistics.acquisitions == 1 && statistics.joinedRefreshes + statistics.cacheHits == 49)
            // Stored as an app token: no account, no refresh token; the next request is the cache's (then the L1's).
            let stored = try await client.lookup(request)
            let storedRefreshToken = try stored.refreshToken
            #expect(stored.outcome == .hit && stored.accessToken?.entity.homeAccountID == "" && storedRefreshToken == nil)
            for _ in 0..<2 { #expect(try await client.token(for: request, acquire: endpoint.acquire("contoso")).source == .cache) }
            // Another tenant is another token; a forced request acquires again.
            let fabrikam = TokenRequest.app(clientID: User.client, authority: Self.tenant("fabrikam.onmicrosoft.com"), scopes: Self.resource)
            #expect(try await client.token(for: fabrikam, acquire: endpoint.acquire("fabrikam")).value == "at-fabrikam-2")
            var forced = request
            forced.forceRefresh = true
            #expect(try await client.token(for: forced, acquire: endpoint.acquire("contoso")).value == "at-contoso-3")
            #expect(try await client.token(for: request, acquire: endpoint.acquire("contoso")).value == "at-contoso-3")
            #expect(endpoint.called == ["contoso", "fabrikam", "contoso"])
            // Without a way to acquire, an app request the cache cannot answer needs what the app does not have.
            let other = TokenRequest.app(clientID: User.client, authority: Self.tenant("northwind.onmicrosoft.com"), scopes: Self.resource)
            await #expect(throws: TokenClientError.self) { try await client.token(for: other) }
        }
    }

    /// Two FMI paths of one tenant are two partitions (extended cache keys): each acquires and stores under its own key,
    /// and neither, nor the plain request, answers another.
    @Test func eachExtendedCacheKeyAcquiresItsOwnToken() async throws {
        try await withClient { client async throws in
            let endpoint = AppEndpoint()
            let tenant = Self.tenant("contoso.onmicrosoft.com")
            let paths = ["Agents/agent-1", "Agents/agent-2"]
            let requests = paths.map {
                TokenRequest.app(clientID: User.client, authority: tenant, scopes: Self.resource, extendedCacheKey: ExtendedCacheKey(parameters: ["fmi_path": $0]))
            }
            let plain = TokenRequest.app(clientID: User.client, authority: tenant, scopes: Self.resource)
            for round in 0..<2 {
                #expect(try await client.token(for: requests[0], acquire: endpoint.acquire("agent-1")).value == "at-agent-1-1")
                #expect(try await client.token(for: requests[1], acquire: endpoint.acquire("agent-2")).value == "at-agent-2-2")
                #expect(try await client.token(for: plain, acquire: endpoint.acquire("plain")).value == "at-plain-3")
                if round == 0 { #expect(endpoint.called == ["agent-1", "agent-2", "plain"]) }
            }
            #expect(endpoint.called.count == 3)
            #expect(try await client.lookup(requests[1]).accessToken?.entity.extendedCacheKey == requests[1].extendedCacheKey?.value)
        }
    }

    /// What `acquire` throws reaches every caller waiting on it unchanged, nothing is stored, and the lease is released:
    /// the next request acquires at once rather than after the lease's 30 s.
    @Test func aFailedAcquisitionReachesEveryCallerAndFreesItsLease() async throws {
        try await withClient { client async throws in
            let request = TokenRequest.app(clientID: User.client, authority: Self.tenant("contoso.onmicrosoft.com"), scopes: Self.resource)
            let failing = AppEndpoint(holding: true, failing: true)
            let errors = await withTaskGroup(of: (any Error)?.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        do { _ = try await client.token(for: request, acquire: failing.acquire("contoso")) } catch { return error }
                        return nil
                    }
                }
                try? await waitUntil("every caller asked") { client.statistics.tokenRequests == 10 }
                failing.gate.open()
                return await group.reduce(into: [(any Error)?]()) { $0.append($1) }
            }
            #expect(errors.allSatisfy { $0 is AppEndpoint.Refused })
            #expect(client.statistics.failedAcquisitions == 1)
            #expect(try await client.lookup(request).accessToken == nil)
            let started = ContinuousClock.now
            #expect(try await client.token(for: request, acquire: AppEndpoint().acquire("contoso")).source == .acquired)
            #expect(ContinuousClock.now - started < .seconds(10))
            #expect(client.statistics.leaseWaits == 0)
        }
    }

    /// Two clients of one store (as two processes or two hosts: each has its own single flight) acquire once between
    /// them: the second finds the first's lease and waits for what it stores. On a directory and on a shared store.
    @Test(arguments: CrossProcessRefreshTests.stores) func twoClientsOfOneStoreAcquireOnce(store kind: String) async throws {
        let root = try await Self.emptyStore(kind)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let configuration = CrossProcessRefreshTests.configuration(root)
        let first = try TokenClient(configuration: configuration), second = try TokenClient(configuration: configuration)
        let endpoint = AppEndpoint(holding: true)
        let request = TokenRequest.app(clientID: User.client, authority: Self.tenant("contoso.onmicrosoft.com"), scopes: Self.resource)
        async let one = first.token(for: request, acquire: endpoint.acquire("first"))
        try await waitUntil("the first acquires") { endpoint.called.count == 1 }
        async let two = second.token(for: request, acquire: endpoint.acquire("second"))
        try await waitUntil("the second waits for the first's lease") { second.statistics.leaseWaits == 1 }
        endpoint.gate.open()
        let (a, b) = try await (one, two)
        #expect(a.value == "at-first-1" && b.value == "at-first-1")
        #expect(endpoint.called == ["first"])
        #expect(first.statistics.acquisitions == 1 && second.statistics.acquisitions == 0)
    }

    /// Another holder's acquisition lease holds a request up while it is held — the request waits, and acquires
    /// nothing — until it is released (the holder failed) or lapses (the holder stopped: crashed, paused); then the
    /// request acquires itself, never before.
    @Test(arguments: CrossProcessRefreshTests.stores) func anotherHoldersLeaseHoldsARequestUpUntilReleasedOrLapsed(store kind: String) async throws {
        let root = try await Self.emptyStore(kind)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let configuration = CrossProcessRefreshTests.configuration(root)
        let tenant = Self.tenant("contoso.onmicrosoft.com")
        let held = TokenRequest.app(clientID: User.client, authority: tenant, scopes: Self.resource)
        let other = try TokenStore.openOrCreate(configuration)
        let client = try TokenClient(configuration: configuration)

        // Held for ten minutes: the request waits and acquires nothing, however long this machine takes.
        guard case .taken(let lease) = try other.takeAcquisitionLease(for: held.acquiredTokenKey, duration: .seconds(600), now: TokenClient.systemMilliseconds())
        else { Issue.record("the lease was not taken"); return }
        #expect(try other.takeAcquisitionLease(for: held.acquiredTokenKey, duration: .seconds(600), now: TokenClient.systemMilliseconds()) == .held(until: lease.expiresAt))
        let endpoint = AppEndpoint()
        async let waiting = client.token(for: held, acquire: endpoint.acquire("waiter"))
        try await waitUntil("the request waits for the other holder's lease") { client.statistics.leaseWaits == 1 }
        try await Task.sleep(for: .milliseconds(200))
        #expect(endpoint.called.isEmpty)
        // The holder gives up (its acquisition failed): the waiter acquires.
        #expect(try other.releaseAcquisitionLease(lease))
        #expect(try await waiting.source == .acquired && endpoint.called == ["waiter"])
        #expect(try other.releaseAcquisitionLease(lease) == false)

        // Lapsing: a holder that stopped with a lease of a second binds nobody after it.
        let lapsing = TokenRequest.app(clientID: User.client, authority: tenant, scopes: ["api://backend/.default"])
        guard case .taken(let short) = try other.takeAcquisitionLease(for: lapsing.acquiredTokenKey, duration: .seconds(1), now: TokenClient.systemMilliseconds())
        else { Issue.record("the lease was not taken"); return }
        let acquiredAt = Atomic<Int64>(0)
        let survivor = endpoint.acquire("survivor")
        let token = try await client.token(for: lapsing) { scopes in
            acquiredAt.store(TokenClient.systemMilliseconds(), ordering: .relaxed)
            return try await survivor(scopes)
        }
        #expect(token.source == .acquired)
        #expect(acquiredAt.load(ordering: .relaxed) >= short.expiresAt)
        // Stored and released: a further request of either kind is the cache's.
        #expect(try await client.token(for: lapsing, acquire: endpoint.acquire("again")).source == .cache)
        #expect(endpoint.called == ["waiter", "survivor"])
    }

    /// A web API's callers (on-behalf-of, partitioned by the hash of each caller's incoming token), as MSAL .NET's
    /// `AcquireTokenOnBehalfOf`: each caller's first request is exchanged, later ones come from the cache, never
    /// another caller's or the user's own; an expired token or a forced request is exchanged again (the assertion is at
    /// hand; the partition's refresh token is not redeemed); and no assertion reaches the disk.
    @Test func onBehalfOfExchangesPerCallerAndNeverAnswersAnother() async throws {
        try await withSignedInClient() { (client, endpoint, clock) async throws in
            let exchange = AppEndpoint()
            let assertions = ["eyJ-incoming-token-of-caller-a.sig", "eyJ-incoming-token-of-caller-b.sig"]
            let requests = assertions.map {
                TokenRequest.onBehalfOf(OnBehalfOfKey(assertion: Secret($0)), clientID: User.client, authority: Self.userTenant, scopes: ["User.Read"])
            }
            func acquire(_ index: Int) -> TokenClient.Acquire { exchange.acquire(index == 0 ? "a" : "b", refreshToken: "rt-obo-\(index)") }
            #expect(try await client.token(for: requests[0], acquire: acquire(0)).value == "at-a-1")
            #expect(try await client.token(for: requests[1], acquire: acquire(1)).value == "at-b-2")
            for _ in 0..<2 {  // the cache, then the L1
                #expect(try await client.token(for: requests[0], acquire: acquire(0)).value == "at-a-1")
                #expect(try await client.token(for: requests[1], acquire: acquire(1)).value == "at-b-2")
            }
            // The user's own token is untouched, and answers no caller.
            #expect(try await client.token(for: User.request(), refresh: endpoint.redeem).value == "at-1")
            #expect(exchange.called == ["a", "b"])
            // Expired: exchanged again, not refreshed; forced: exchanged though a token is stored.
            clock.advance(by: 3600)
            #expect(try await client.token(for: requests[0], acquire: acquire(0)).value == "at-a-3")
            var forced = requests[1]
            forced.forceRefresh = true
            #expect(try await client.token(for: forced, acquire: acquire(1)).value == "at-b-4")
            #expect(try await client.token(for: requests[1], acquire: acquire(1)).value == "at-b-4")
            #expect(exchange.called == ["a", "b", "a", "b"] && endpoint.redeemed.isEmpty)
            // Each exchange's refresh token is kept in its partition (for a long-running continuation).
            #expect(try await client.lookup(requests[1]).refreshToken?.entity.secret.reveal() == "rt-obo-1-4")
            // Canary: the partition keys are hashes; no assertion is in any file of the store.
            for assertion in assertions {
                let holding = try files(under: client.store.configuration.directory, holding: assertion)
                #expect(holding.isEmpty, "\(holding) hold an assertion")
            }
        }
    }

    /// A long-running process: started with the caller's assertion under a key the app chose, then continued with the
    /// key alone — the cache, then the partition's refresh token; with neither, the caller must come back. And the
    /// requests `acquire` refuses, naming what is wrong: a user's, and one without a tenant.
    @Test func aLongRunningProcessContinuesWithItsKeyAlone() async throws {
        try await withSignedInClient() { (client, endpoint, clock) async throws in
            let key = try OnBehalfOfKey(longRunningProcessKey: "report-job-7")
            let request = TokenRequest.onBehalfOf(key, clientID: User.client, authority: Self.userTenant, scopes: ["User.Read"])
            let started = try await client.token(for: request, acquire: AppEndpoint().acquire("job", refreshToken: "rt-job"))
            #expect(started.source == .acquired)
            #expect(try await client.token(for: request, refresh: endpoint.redeem).value == started.value)
            clock.advance(by: 3600)
            endpoint.accept("rt-job-1")
            #expect(try await client.token(for: request, refresh: endpoint.redeem).source == .refresh)
            #expect(endpoint.redeemed == ["rt-job-1"])
            clock.advance(by: 3600)
            let refusing: TokenClient.Refresh = { _, _ in throw TokenClientError.refreshTokenRefused() }
            await #expect { try await client.token(for: request, refresh: refusing) } throws: { error in
                (error as? TokenClientError)?.code == .interactionRequired
            }
            // Refused by acquire: a request without a tenant, and a user's request.
            let tenantless = TokenRequest.onBehalfOf(key, clientID: User.client, authority: User.authority, scopes: ["User.Read"])
            for refused in [tenantless, User.request()] {
                await #expect { try await client.token(for: refused, acquire: AppEndpoint().acquire("never")) } throws: { error in
                    (error as? TokenCacheError)?.code == .invalidArgument
                }
            }
            // A flight that can only redeem never answers a caller that could acquire.
            #expect(request.flightKey(acquiring: true) != request.flightKey(acquiring: false))
        }
    }

    /// A new store (directory or shared) with nothing in it, in a new directory that holds its key (and URL).
    static func emptyStore(_ kind: String) async throws -> String {
        let root = try makeTemporaryDirectory(prefix: "token-cache-acquire")
        try KeyFile.create(at: root + "/key")
        if kind == "shared" { try #require(PostgreSQLTestServer.uniqueStoreURL("acquire")).write(toFile: root + "/url", atomically: true, encoding: .utf8) }
        _ = try TokenStore.openOrCreate(CrossProcessRefreshTests.configuration(root))
        return root
    }
}
