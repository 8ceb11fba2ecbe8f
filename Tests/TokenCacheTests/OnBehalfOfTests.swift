import Foundation
import TestSupport
import Testing
import TokenCacheRecords
import TokenCacheStorage

@testable import TokenCache
@testable import TokenCacheOperations

/// On-behalf-of partitions (Docs/Semantics.md, "On-behalf-of partitions"), from MSAL .NET's documented behaviour: a
/// web API's tokens obtained for one caller never answer another caller, are found by the caller's assertion without
/// a home account id, and refresh within their partition.
@Suite struct OnBehalfOfTests {
    static let assertionA = Secret("eyJhbGciOiJub25lIn0.eyJzdWIiOiJjYWxsZXIifQ.")
    static let assertionB = Secret("eyJhbGciOiJub25lIn0.eyJzdWIiOiJvdGhlci1jYWxsZXIifQ.")
    static let api = "https://graph.microsoft.com/User.Read"

    /// MSAL .NET's `UserAssertion` hash: base64url without padding of SHA-256 over the assertion (computed here with
    /// Python's hashlib).
    @Test func theAssertionHashIsMSALDotNetS() {
        #expect(OnBehalfOfKey(assertion: Self.assertionA).value == "ehRedFWakzoJSXaWhi5KaXle1gqE70lscr6Yhs3SFrE")
        #expect(OnBehalfOfKey(assertion: Self.assertionA) != OnBehalfOfKey(assertion: Self.assertionB))
    }

    @Test func aLongRunningKeyIsTheApplicationsOwn() throws {
        #expect(try OnBehalfOfKey(longRunningProcessKey: "Session/42").value == "Session/42")
        for bad in ["", "tab\there", String(repeating: "k", count: OnBehalfOfKey.maximumLength + 1)] {
            let error = #expect(throws: TokenCacheError.self) { try OnBehalfOfKey(longRunningProcessKey: bad) }
            #expect(error?.code == .invalidArgument)
        }
    }

    /// Two callers of the same web API, same downstream scopes, same account even: each gets its own token, a query
    /// without a partition gets neither, and a partition query never gets the account's own token.
    @Test(arguments: TestBackend.allCases)
    func twoCallersNeverGetEachOthersToken(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let (a, b) = try Self.ingestTwoCallers(cache)
            #expect(try Self.answer(cache, a) == "at-a")
            #expect(try Self.answer(cache, b) == "at-b")
            // Found by the partition alone: a home account id is not needed, and a wrong one does not matter.
            #expect(try Self.answer(cache, a, home: "") == "at-a")
            #expect(try Self.answer(cache, a, home: "someone.else") == "at-a")
            let plain = try cache.silentLookup(Self.query(nil))
            #expect(plain.outcome == .interactionRequired && plain.accessToken == nil)
            #expect(try plain.refreshToken == nil)
            // The account's own sign-in does not leak into a partition, nor the partition into it.
            try cache.ingest(try TokenResponse(json: Responses.json(accessToken: "at-own", scope: Self.api, refreshToken: "rt-own")), context: Self.context(nil))
            #expect(try Self.answer(cache, nil) == "at-own")
            #expect(try Self.answer(cache, a) == "at-a")
            #expect(try Self.answer(cache, OnBehalfOfKey(assertion: Secret("another"))) == nil)
            let stored = try #require(try cache.silentLookup(Self.query(a)).accessToken)
            #expect(stored.entity.userAssertionHash == a.value)
            #expect(try cache.verify().isClean)
        }
    }

    /// An expired access token with a partitioned refresh token: the lookup offers that partition's refresh token, and
    /// the refreshed response lands in the partition again, the other partition untouched.
    @Test(arguments: TestBackend.allCases)
    func anExpiredTokenRefreshesWithinItsPartition(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let (a, b) = try Self.ingestTwoCallers(cache)
            let later = ReferenceTime.now + 3600
            let expired = try cache.silentLookup(Self.query(a, now: later))
            #expect(expired.outcome == .refresh)
            let redeemed = try #require(try expired.refreshToken)
            #expect(redeemed.entity.secret.reveal() == "rt-a" && redeemed.entity.userAssertionHash == a.value)
            try cache.ingest(
                try TokenResponse(json: Responses.json(accessToken: "at-a-2", scope: Self.api, refreshToken: "rt-a-2")),
                context: Self.context(a, grantType: "refresh_token", now: later)
            )
            let refreshed = try cache.silentLookup(Self.query(a, now: later))
            #expect(refreshed.accessToken?.entity.secret.reveal() == "at-a-2")
            #expect(try refreshed.refreshToken?.entity.secret.reveal() == "rt-a-2")
            #expect(try cache.silentLookup(Self.query(b, now: later)).refreshToken?.entity.secret.reveal() == "rt-b")
            #expect(try cache.info().recordCounts[.refreshToken] == 2)
        }
    }

    /// A response without client_info or id_token (the account unknown): the partition still keeps both tokens.
    @Test(arguments: TestBackend.allCases)
    func aPartitionNeedsNoAccount(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let key = try OnBehalfOfKey(longRunningProcessKey: "long-running/7")
            let response = try TokenResponse(json: #"{"access_token":"at-lr","token_type":"Bearer","expires_in":3600,"refresh_token":"rt-lr","scope":"\#(Self.api)"}"#)
            try cache.ingest(response, context: Self.context(key))
            #expect(try Self.answer(cache, key, home: "") == "at-lr")
            let expired = try cache.silentLookup(Self.query(key, home: "", now: ReferenceTime.now + 3600))
            #expect(expired.outcome == .refresh)
            #expect(try expired.refreshToken?.entity.secret.reveal() == "rt-lr")
            #expect(try cache.info().recordCounts[.account, default: 0] == 0)
        }
    }

    /// Signing one partition out removes its access and refresh tokens and nothing else.
    @Test(arguments: TestBackend.allCases)
    func signingAPartitionOutLeavesTheOthers(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let (a, b) = try Self.ingestTwoCallers(cache)
            try cache.ingest(try TokenResponse(json: Responses.json(accessToken: "at-own", scope: Self.api, refreshToken: "rt-own")), context: Self.context(nil))
            let other = try cache.removeOnBehalfOf(a, clientID: "another-client")
            #expect(other.accessTokens == 0 && other.refreshTokens == 0)
            let removed = try cache.removeOnBehalfOf(a)
            #expect(removed.accessTokens == 1 && removed.refreshTokens == 1 && removed.accounts == 0)
            #expect(try cache.silentLookup(Self.query(a)).outcome == .interactionRequired)
            #expect(try Self.answer(cache, b) == "at-b")
            #expect(try Self.answer(cache, nil) == "at-own")
        }
    }

    /// The assertion itself never reaches the store: not in any file, in any of the encodings a careless writer uses.
    @Test func theAssertionNeverReachesTheDisk() throws {
        try TestStore.with { store, cache in
            let canary = "ASSERTION-CANARY-5d81e0"
            let key = OnBehalfOfKey(assertion: Secret(canary))
            try Self.ingest(cache, "at-a", "rt-a", key)
            #expect(try Self.answer(cache, key) == "at-a")  // stored, and found by the assertion
            let forms = [canary, canary.lowercased(), Data(canary.utf8).base64EncodedString(), Data(canary.utf8).map { String(format: "%02x", $0) }.joined()]
            for (name, bytes) in try store.allFileBytes() {
                for form in forms { #expect(!bytes.contains(form), "\(name) contains a form of the assertion") }
            }
        }
    }

    /// A partition's refresh token stored under its account, as stores written before partitions were keyed hold
    /// imported on-behalf-of tokens: verify names it misplaced, and repair moves it into its partition, where the
    /// partition's lookup then finds it.
    @Test func aTokenStoredUnderItsAccountIsMovedIntoItsPartitionByRepair() throws {
        try TestStore.with { store, cache in
            let partition = OnBehalfOfKey(assertion: Self.assertionA)
            let token = RefreshToken(
                homeAccountID: User.home, environment: User.cloud, clientID: User.client, secret: Secret("rt-legacy"),
                userAssertionHash: partition.value
            )
            var legacyKey = RefreshToken.Key(homeAccountID: User.home, environment: User.cloud, owner: .client(User.client))
            legacyKey.userAssertionHash = nil
            let legacy = RefreshToken.storageKey(for: legacyKey, index: cache.store.keyring.index)
            try cache.store.backend.write { txn in try cache.store.seal(token, key: legacy, revision: 1, now: 0, into: txn) }
            #expect(try cache.verify().misplaced.map(\.kind) == [.refreshToken])
            #expect(try cache.silentLookup(Self.query(partition)).outcome == .interactionRequired)
            let report = try cache.repair(backupTo: store.root + "/before-repair")
            #expect(report.changes.count == 1)
            #expect(try cache.verify().isClean)
            let found = try cache.silentLookup(Self.query(partition))
            #expect(found.outcome == .refresh)
            #expect(try found.refreshToken?.entity.secret.reveal() == "rt-legacy")
        }
    }

    static func context(_ partition: OnBehalfOfKey?, grantType: String? = nil, now: Int64 = ReferenceTime.now) throws -> TokenRequestContext {
        TokenRequestContext(
            clientID: User.client, authority: try Authority("https://login.microsoftonline.com/\(User.utid)"), requestedScopes: [api],
            grantType: grantType ?? (partition == nil ? "authorization_code" : "urn:ietf:params:oauth:grant-type:jwt-bearer"), now: now,
            onBehalfOf: partition
        )
    }

    /// Callers A and B's partitions, each with its access token (`at-a`, `at-b`) and refresh token (`rt-a`, `rt-b`).
    static func ingestTwoCallers(_ cache: TokenStore) throws -> (OnBehalfOfKey, OnBehalfOfKey) {
        let a = OnBehalfOfKey(assertion: assertionA), b = OnBehalfOfKey(assertion: assertionB)
        try ingest(cache, "at-a", "rt-a", a)
        try ingest(cache, "at-b", "rt-b", b)
        return (a, b)
    }

    static func ingest(_ cache: TokenStore, _ accessToken: String, _ refreshToken: String, _ partition: OnBehalfOfKey) throws {
        let response = try TokenResponse(json: Responses.json(accessToken: accessToken, scope: api, refreshToken: refreshToken))
        try cache.ingest(response, context: context(partition))
    }

    static func query(_ partition: OnBehalfOfKey?, home: String = User.home, now: Int64 = ReferenceTime.now) -> SilentLookupQuery {
        SilentLookupQuery(
            clientID: User.client, homeAccountID: home, environment: User.cloud, realm: User.utid, scopes: [api], onBehalfOf: partition, now: now
        )
    }

    static func answer(_ cache: TokenStore, _ partition: OnBehalfOfKey?, home: String = User.home) throws -> String? {
        try cache.silentLookup(query(partition, home: home)).accessToken?.entity.secret.reveal()
    }
}
