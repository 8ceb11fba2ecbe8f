import TestSupport
import Testing

@testable import TokenCache
import TokenCacheRecords

/// The keys an ingest plan prepares are the keys each entity's own fields derive (FORMAT.md §4.3).
@Suite struct IngestPlanTests {
    @Test(arguments: [false, true])
    func everyPreparedKeyIsTheEntitysOwn(familyMember: Bool) throws {
        let cache = try TokenStore.create(.inMemory())
        let index = cache.store.keyring.index
        let response = try TokenResponse(json: Responses.json(foci: familyMember ? "1" : nil))
        let derived = try DerivedEntities(response: response, context: try Responses.context())
        let plan = try IngestPlan(derived, index: index)
        let token = derived.accessToken
        #expect(plan.accessTokenKey == AccessToken.storageKey(for: token.key, index: index))
        #expect(plan.accessTokenKey.starts(with: plan.bucket) && plan.bucket.count == RecordStore.bucketPrefixCount)
        #expect(plan.scopes == (try ScopeSet(parsing: token.target)))
        let refreshToken = try #require(derived.refreshToken)
        #expect(plan.refreshTokenKey == RefreshToken.storageKey(for: refreshToken.key, index: index))
        let idToken = try #require(derived.idToken)
        #expect(plan.idTokenKey == IDToken.storageKey(for: idToken.key, index: index))
        let account = try #require(derived.account)
        #expect(plan.accountKey == Account.storageKey(for: account.key, index: index))
        #expect(plan.appMetadataKey == AppMetadata.storageKey(for: derived.appMetadata.key, index: index))
    }
}
