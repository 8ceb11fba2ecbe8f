import TestSupport
import Testing
import TokenCache

@testable import TokenCacheClient

/// Accounts as an app lists and picks them: with their claims, and the current one of a single-account app.
@Suite struct AccountTests {
    static let other = (uid: "11111111-0000-0000-66f3-3332eca7ea81", username: "megan.bowen@contoso.example")

    @Test func accountsCarryTheirClaims() async throws {
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        try await withClient(clock: clock) { client in
            try await client.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
            try await client.ingest(
                endpoint.signIn(username: Self.other.username, uid: Self.other.uid), clientID: User.client, authority: User.authority, scopes: ["User.Read"]
            )
            let accounts = try await client.accounts(clientID: User.client)
            #expect(accounts.map(\.username) == [User.username, Self.other.username])
            #expect(accounts.map(\.claims.objectID) == [User.uid, Self.other.uid])
            #expect(accounts.allSatisfy { $0.realm == User.utid && $0.environment == "login.microsoftonline.com" })
            #expect(try await client.accounts(clientID: "another-client").isEmpty)
            // Without a client, any client's ID token gives the claims.
            #expect(try await client.accounts().map(\.claims.name) == ["Adele Vance", "Adele Vance"])
            let one = try #require(try await client.account(homeAccountID: "\(Self.other.uid).\(User.utid)".uppercased()))
            #expect(one.username == Self.other.username)
            #expect(try await client.account(homeAccountID: "nobody.\(User.utid)") == nil)
        }
    }

    @Test func theCurrentAccountIsTheOneLastSignedInOrRefreshed() async throws {
        let clock = TestClock()
        let endpoint = FakeTokenEndpoint(clock: clock)
        try await withClient(clock: clock) { client in
            #expect(try await client.currentAccount(clientID: User.client) == nil)
            try await client.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
            clock.advance(by: 10)
            try await client.ingest(
                endpoint.signIn(username: Self.other.username, uid: Self.other.uid), clientID: User.client, authority: User.authority, scopes: ["User.Read"]
            )
            #expect(try await client.currentAccount(clientID: User.client)?.username == Self.other.username)
            clock.advance(by: 10)
            _ = try await client.token(for: User.request(forceRefresh: true), refresh: endpoint.redeem)
            #expect(try await client.currentAccount(clientID: User.client)?.username == User.username)
            try await client.signOut(homeAccountID: User.home, clientID: User.client)
            #expect(try await client.currentAccount(clientID: User.client)?.username == Self.other.username)
        }
    }
}
