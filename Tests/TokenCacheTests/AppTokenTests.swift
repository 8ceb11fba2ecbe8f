import Foundation
import TestSupport
import Testing

@testable import TokenCache

/// Client-credential (app) tokens as Docs/Semantics.md states them ("App tokens (client credentials)"): per tenant,
/// no refresh token, ID token or account, and `.default` scopes matched as any scopes.
@Suite struct AppTokenTests {
    static let scope = "https://graph.microsoft.com/.default"

    @Test(arguments: TestBackend.allCases)
    func eachTenantHasItsOwnTokenAndNothingElseIsStored(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            for tenant in ["tenant-a", "tenant-b"] {
                // A response with a refresh token and an id_token still gives an app token alone: the grant decides.
                let response = try TokenResponse(json: Responses.json(accessToken: "at-\(tenant)", scope: Self.scope, refreshToken: "rt-\(tenant)"))
                let result = try cache.ingest(response, context: Self.context(tenant))
                #expect(result.homeAccountID == "" && result.refreshTokenRevision == nil)
            }
            let counts = try cache.info().recordCounts
            #expect(counts[.accessToken] == 2 && counts[.appMetadata] == 1)
            #expect(counts[.refreshToken, default: 0] == 0 && counts[.idToken, default: 0] == 0 && counts[.account, default: 0] == 0)
            for tenant in ["tenant-a", "tenant-b"] {
                let hit = try cache.silentLookup(Self.query(tenant, scopes: [Self.scope]))
                #expect(hit.outcome == .hit && hit.accessToken?.entity.secret.reveal() == "at-\(tenant)")
                #expect(try hit.refreshToken == nil && hit.idToken == nil && hit.account == nil)
            }
            // Another tenant: nothing to refresh with, so the app must ask again.
            #expect(try cache.silentLookup(Self.query("tenant-c", scopes: [Self.scope])).outcome == .interactionRequired)
            // Expired: still no refresh outcome.
            #expect(try cache.silentLookup(Self.query("tenant-a", scopes: [Self.scope], now: ReferenceTime.now + 3600)).outcome == .interactionRequired)
            // `.default` is a scope like any other: its case folds, and another resource's `.default` is another scope.
            #expect(try cache.silentLookup(Self.query("tenant-a", scopes: ["HTTPS://graph.microsoft.com/.DEFAULT"])).outcome == .hit)
            #expect(try cache.silentLookup(Self.query("tenant-a", scopes: ["https://vault.azure.net/.default"])).outcome == .interactionRequired)
            // A user's lookup never gets an app token.
            #expect(try cache.silentLookup(Self.query("tenant-a", scopes: [Self.scope], home: User.home)).accessToken == nil)
        }
    }

    static func context(_ tenant: String) throws -> TokenRequestContext {
        TokenRequestContext(
            clientID: User.client, authority: try Authority("https://login.microsoftonline.com/\(tenant)"), requestedScopes: [scope],
            grantType: "client_credentials", now: ReferenceTime.now
        )
    }

    static func query(_ tenant: String, scopes: [String], home: String = "", now: Int64 = ReferenceTime.now) -> SilentLookupQuery {
        SilentLookupQuery(clientID: User.client, homeAccountID: home, environment: User.cloud, realm: tenant, scopes: scopes, now: now)
    }
}
