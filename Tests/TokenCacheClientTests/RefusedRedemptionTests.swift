import Foundation
import Synchronization
import TestSupport
import Testing
import TokenCache

@testable import TokenCacheClient

/// A refresh token the token endpoint refused is never offered to it again, and a refusal caused by a holder that
/// redeemed the token first and lost its lease (stopped, swapped out) ends in that holder's rotation, not in a
/// sign-in: the two ways a strict token endpoint with reuse detection would otherwise revoke the whole grant.
@Suite struct RefusedRedemptionTests {
    /// The endpoint's refresh call as an app writes it: a refused token (`invalid_grant`) is
    /// `refreshTokenRefused()`, or, as a claims challenge would be, plain `interactionRequired()`. Counts its calls.
    final class Redeemer: Sendable {
        let endpoint: FakeTokenEndpoint
        let challenge: Bool
        let calls = Mutex(0)
        init(_ endpoint: FakeTokenEndpoint, challenge: Bool = false) {
            self.endpoint = endpoint
            self.challenge = challenge
        }

        var refresh: TokenClient.Refresh {
            { [self] refreshToken, scopes in
                calls.withLock { $0 += 1 }
                do { return try await endpoint.redeem(refreshToken, scopes: scopes) } catch is FakeTokenEndpoint.InvalidGrant {
                    throw challenge ? TokenClientError.interactionRequired() : TokenClientError.refreshTokenRefused()
                }
            }
        }
    }

    /// An interaction asked for one request (a claims challenge, consent for one resource) says nothing about the refresh
    /// token: nothing is recorded, and other requests go on redeeming it.
    @Test func aChallengeForOneRequestRecordsNoRefusal() async throws {
        try await withSignedInClient { (client, endpoint, clock) async throws in
            clock.advance(by: 7200)
            _ = try await endpoint.redeem(Secret("rt-1"), scopes: ["User.Read"])
            let challenged = Redeemer(endpoint, challenge: true)
            await #expect(throws: TokenClientError.self) { try await client.token(for: User.request(), refresh: challenged.refresh) }
            let other = TokenClient(store: client.store, clock: clock, refreshLeaseDuration: .seconds(2))
            let second = Redeemer(endpoint, challenge: true)
            await #expect(throws: TokenClientError.self) { try await other.token(for: User.request(scopes: ["Mail.Read"]), refresh: second.refresh) }
            #expect(second.calls.withLock { $0 } == 1, "a challenge for one request kept another from redeeming the refresh token")
        }
    }

    @Test func aRefusedTokenIsNotOfferedAgainByAnyProcess() async throws {
        try await withSignedInClient { (client, endpoint, clock) async throws in
            clock.advance(by: 7200)
            // Someone redeemed rt-1 and lost the response: the token is dead at the endpoint, still in the store.
            _ = try await endpoint.redeem(Secret("rt-1"), scopes: ["User.Read"])
            let first = Redeemer(endpoint)
            let refused = await #expect(throws: TokenClientError.self) { try await client.token(for: User.request(), refresh: first.refresh) }
            #expect(refused?.code == .interactionRequired)
            #expect(first.calls.withLock { $0 } == 1)
            // Another process (a client of its own on the same store) does not redeem it again.
            let other = TokenClient(store: client.store, clock: clock, refreshLeaseDuration: .seconds(2))
            let second = Redeemer(endpoint)
            for request in [User.request(), User.request(forceRefresh: true)] {
                let again = await #expect(throws: TokenClientError.self) { try await other.token(for: request, refresh: second.refresh) }
                #expect(again?.code == .interactionRequired && again?.accountHint?.username == User.username, "\(String(describing: again))")
            }
            #expect(second.calls.withLock { $0 } == 0, "a refused refresh token was offered to the token endpoint again")
            #expect(endpoint.redeemed == ["rt-1", "rt-1"])
            // A sign-in stores a new refresh token, which the refusal does not bind.
            try await other.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
            clock.advance(by: 7200)
            #expect(try await other.token(for: User.request(), refresh: second.refresh).source == .refresh)
            #expect(second.calls.withLock { $0 } == 1)
        }
    }

    @Test func aRefusalAfterALapsedLeaseWaitsForTheStoppedHoldersRotation() async throws {
        try await withSignedInClient { (client, endpoint, clock) async throws in
            clock.advance(by: 7200)
            let request = User.request()
            // A holder takes a short lease, redeems rt-1 (so the endpoint refuses it from now on) and stops before it
            // stores the response.
            let stored = try #require(try await client.lookup(request).refreshToken)
            guard case .taken = try client.store.takeRefreshLease(on: stored, duration: .milliseconds(150), now: TokenClient.systemMilliseconds()) else {
                Issue.record("no lease")
                return
            }
            let response = try await endpoint.redeem(stored.entity.secret, scopes: ["User.Read"])
            // It resumes once the other process was refused (the endpoint was asked for rt-1 a second time), and
            // stores its rotation, as the protocol's last step does.
            let resumed = Task {
                try await waitUntil("the other process was refused") { endpoint.redeemed.count == 2 }
                try client.store.write { writer in
                    let rotated = RefreshToken(
                        homeAccountID: stored.entity.homeAccountID, environment: stored.entity.environment, clientID: User.client,
                        secret: try #require(response.refreshToken), familyID: nil
                    )
                    try writer.replaceRefreshToken(rotated, expectedSecret: stored.entity.secret)
                    var rest = response
                    rest.refreshToken = nil
                    try writer.ingest(
                        rest,
                        context: TokenRequestContext(
                            clientID: User.client, authority: User.authority, requestedScopes: ["User.Read"], grantType: "refresh_token",
                            now: clock.now()
                        )
                    )
                }
            }
            // Another process waits for the lease, takes it once lapsed, is refused, and uses the stopped holder's
            // rotation once stored instead of asking the user to sign in.
            let other = TokenClient(store: client.store, clock: clock, refreshLeaseDuration: .seconds(5))
            let redeemer = Redeemer(endpoint)
            let result = try await other.token(for: request, refresh: redeemer.refresh)
            try await resumed.value
            #expect(result.value == "at-2")
            #expect(redeemer.calls.withLock { $0 } == 1)
            #expect(endpoint.redeemed == ["rt-1", "rt-1"])
            // rt-2 is stored and works.
            clock.advance(by: 7200)
            #expect(try await other.token(for: request, refresh: redeemer.refresh).value == "at-3")
        }
    }
}
