import Foundation
import Synchronization
import TestSupport
import Testing

@testable import TokenCache

/// The rules of Docs/Semantics.md end to end through the store: ingest, silent lookup, rotation, accounts, sign-out.
@Suite struct SilentFlowTests {
    @Test(arguments: TestBackend.allCases)
    func anIngestedResponseIsAHitWithItsRefreshTokenIDTokenAndAccount(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let result = try cache.ingest(try TokenResponse(json: Responses.json()), context: try Responses.context())
            #expect(result.homeAccountID == User.home)
            #expect(result.accessToken.realm == User.utid)  // /common resolved to the id_token tid
            let hit = try cache.silentLookup(Responses.query())
            #expect(hit.outcome == .hit && !hit.refreshRecommended)
            #expect(hit.accessToken?.entity.secret.reveal() == "at-1")
            #expect(try hit.refreshToken?.entity.secret.reveal() == "rt-1")
            #expect(try hit.idToken != nil)
            #expect(try hit.account?.entity.username == User.username)
            #expect(try hit.corrupt.isEmpty)
            // Every record of the response, one transaction.
            let counts = try cache.info().recordCounts
            #expect(counts == [.accessToken: 1, .refreshToken: 1, .idToken: 1, .account: 1, .appMetadata: 1])
        }
    }

    @Test(arguments: TestBackend.allCases)
    func scopesMatchAsACaseInsensitiveSubsetIgnoringReservedScopes(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.ingest(try TokenResponse(json: Responses.json(scope: "User.Read Mail.Read openid profile")), context: try Responses.context())
            for scopes in [["user.read"], ["MAIL.READ", "User.Read"], ["openid", "user.read", "offline_access"], ["  user.read  "]] {
                #expect(try cache.silentLookup(Responses.query(scopes: scopes)).outcome == .hit, "\(scopes)")
            }
            #expect(try cache.silentLookup(Responses.query(scopes: ["User.Read", "Files.Read"])).outcome == .refresh)
            #expect(errorCode { try cache.silentLookup(Responses.query(scopes: ["openid", "profile"])) } == .invalidArgument)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func environmentsMatchByAliasGroupAndTheGroupCanBeExtended(backend: TestBackend) throws {
        try withTemporaryDirectory { root in
            let store = TestStore(root: root, backend: backend)
            try KeyFile.create(at: store.keyFile)
            var configuration = store.configuration
            configuration.environmentAliases = EnvironmentAliases.builtIn.adding(["login.contoso-sovereign.example", "sts.contoso-sovereign.example"])
            let cache = try TokenStore.create(configuration)
            try cache.ingest(try TokenResponse(json: Responses.json()), context: try Responses.context(authority: "https://login.windows.net/common"))
            #expect(try cache.silentLookup(Responses.query(environment: "login.microsoftonline.com")).outcome == .hit)
            #expect(try cache.silentLookup(Responses.query(environment: "STS.WINDOWS.NET")).outcome == .hit)
            #expect(try cache.silentLookup(Responses.query(environment: "login.chinacloudapi.cn")).outcome == .interactionRequired)
            try cache.ingest(
                try TokenResponse(json: Responses.json(accessToken: "at-sovereign")),
                context: try Responses.context(authority: "https://login.contoso-sovereign.example/common")
            )
            let sovereign = try cache.silentLookup(Responses.query(environment: "sts.contoso-sovereign.example"))
            #expect(sovereign.accessToken?.entity.secret.reveal() == "at-sovereign")
            // The configured table is the store's: a lookup inside a transaction gives the same answer, and so do
            // the other operations that match hosts (listing, sign-out), whichever doorway they come through.
            let inTransaction = try cache.read { try $0.silentLookup(Responses.query(environment: "sts.contoso-sovereign.example")) }
            #expect(inTransaction.outcome == .hit && inTransaction.accessToken?.entity.secret.reveal() == "at-sovereign")
            let listed = try cache.read { try $0.accounts(environment: "sts.contoso-sovereign.example") }
            #expect(listed.accounts.count == 1)
            let removed = try cache.write {
                try $0.removeAccount(
                    homeAccountID: User.home, clientID: nil, environment: "sts.contoso-sovereign.example"
                )
            }
            #expect(removed.accessTokens == 1)
            #expect(try cache.silentLookup(Responses.query(environment: "login.contoso-sovereign.example")).outcome == .interactionRequired)
            #expect(try cache.silentLookup(Responses.query(environment: "login.microsoftonline.com")).outcome == .hit)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func tenantlessRealmsFallBackToTheHomeTenantAfterAnExactMatch(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.ingest(try TokenResponse(json: Responses.json()), context: try Responses.context())
            #expect(try cache.silentLookup(Responses.query(realm: "common")).outcome == .hit)
            #expect(try cache.silentLookup(Responses.query(realm: "ORGANIZATIONS")).outcome == .hit)
            #expect(try cache.silentLookup(Responses.query(realm: "other-tenant")).outcome == .refresh)
            // A token stored under a literal "common" (as MSAL Python and Go write) is found exactly first.
            var literal = Samples.accessToken(home: User.home, client: User.client, realm: "common", target: "User.Read", secret: "literal")
            literal.cachedAt = Samples.now - 10
            literal.expiresOn = Samples.now + 3600
            try cache.put(literal)
            #expect(try cache.silentLookup(Responses.query(realm: "common")).accessToken?.entity.secret.reveal() == "literal")
        }
    }

    @Test(arguments: [(Int64(299), false), (300, true), (301, true), (-1, false), (0, false)])
    func expiryNeedsFiveMinutesLeft(secondsLeft: Int64, usable: Bool) throws {
        try TestStore.with { _, cache in
            try cache.ingest(try TokenResponse(json: Responses.json(expiresIn: 3600)), context: try Responses.context())
            let now = Samples.now + 3600 - secondsLeft
            #expect((try cache.silentLookup(Responses.query(now: now)).outcome == .hit) == usable)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aTokenCachedInTheFutureIsNotUsedAndPassedRefreshOnIsFlagged(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.ingest(try TokenResponse(json: Responses.json(refreshIn: 1800)), context: try Responses.context())
            #expect(try cache.silentLookup(Responses.query(now: Samples.now - 1)).outcome == .refresh)
            #expect(try cache.silentLookup(Responses.query(now: Samples.now + 1799)).refreshRecommended == false)
            let due = try cache.silentLookup(Responses.query(now: Samples.now + 1800))
            #expect(due.outcome == .hit && due.refreshRecommended)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func anIntersectingNewTokenReplacesTheOldOneButADisjointOneCoexists(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.ingest(try TokenResponse(json: Responses.json(accessToken: "old", scope: "User.Read Mail.Read openid")), context: try Responses.context())
            try cache.ingest(try TokenResponse(json: Responses.json(accessToken: "files", scope: "Files.Read openid profile")), context: try Responses.context())
            #expect(try cache.list(AccessToken.self).records.count == 2)  // sharing only openid does not evict
            let result = try cache.ingest(try TokenResponse(json: Responses.json(accessToken: "new", scope: "mail.read Calendars.Read")), context: try Responses.context())
            #expect(result.accessTokensRemoved == 1)
            let tokens = try cache.list(AccessToken.self).records.map { $0.entity.secret.reveal() }.sorted()
            #expect(tokens == ["files", "new"])
            #expect(try cache.silentLookup(Responses.query(scopes: ["User.Read"])).outcome == .refresh)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func severalMatchesAfterAnImportPickTheMostRecentlyCachedThenTheLaterExpiry(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            func token(_ secret: String, target: String, cachedAt: Int64, expiresOn: Int64, environment: String = User.cloud) -> AccessToken {
                var token = Samples.accessToken(home: User.home, client: User.client, realm: User.utid, target: target, secret: secret, environment: environment)
                token.cachedAt = cachedAt
                token.expiresOn = expiresOn
                token.refreshOn = nil
                return token
            }
            try cache.write { writer in
                try writer.put(token("older", target: "User.Read a", cachedAt: Samples.now - 100, expiresOn: Samples.now + 9000))
                try writer.put(token("newer-short", target: "User.Read b", cachedAt: Samples.now - 10, expiresOn: Samples.now + 1000))
                try writer.put(token("newer-long", target: "User.Read c", cachedAt: Samples.now - 10, expiresOn: Samples.now + 2000, environment: "login.windows.net"))
            }
            #expect(try cache.silentLookup(Responses.query()).accessToken?.entity.secret.reveal() == "newer-long")
        }
    }

    @Test(arguments: TestBackend.allCases)
    func twoMatchesInOneBucketAreDecidedFromOnePassWithTheNewerWinning(backend: TestBackend) throws {
        // Two tokens: the lookup keeps both views from its single pass over the bucket (no second walk).
        try TestStore.with(backend) { _, cache in
            for (first, second, winner) in [(Int64(100), Int64(10), "b"), (10, 100, "a")] {
                try cache.write { writer in
                    for (secret, age) in [("a", first), ("b", second)] {
                        var token = Samples.accessToken(
                            home: User.home, client: User.client, realm: User.utid, target: "User.Read scope-\(secret)",
                            secret: secret, environment: User.cloud)
                        token.cachedAt = Samples.now - age
                        try writer.put(token)
                    }
                }
                #expect(try cache.silentLookup(Responses.query()).accessToken?.entity.secret.reveal() == winner)
                // Only one of them covers this request: it wins whatever its age.
                #expect(try cache.silentLookup(Responses.query(scopes: ["scope-a"])).accessToken?.entity.secret.reveal() == "a")
            }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aHitKeepsTheStoredSpellingOfItsIdentifiers(backend: TestBackend) throws {
        // The decoder shares the query's strings only when the bytes are identical; other spellings are kept as stored.
        try TestStore.with(backend) { _, cache in
            let stored = Samples.accessToken(
                home: User.home.uppercased(), client: User.client.uppercased(), realm: User.utid.uppercased(),
                target: "User.Read", environment: "Login.MicrosoftOnline.com")
            try cache.put(stored)
            let query = Responses.query(home: User.home.uppercased())
            let hit = try #require(try cache.silentLookup(query).accessToken).entity
            #expect(hit == stored)
            #expect(hit.homeAccountID == query.homeAccountID && hit.clientID != query.clientID && hit.realm != query.realm)
            #expect(hit.environment == "Login.MicrosoftOnline.com")
        }
    }

    @Test(arguments: TestBackend.allCases)
    func familyRefreshTokensComeFirstForMembersAndUnknownClientsOnly(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            // The member client gets a family RT (foci 1); another client has its own RT.
            try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: "family-rt", foci: "1")), context: try Responses.context(client: Responses.familyMember))
            try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: "own-rt")), context: try Responses.context())
            // User.client has app metadata without a family: only its own RT.
            let own = try cache.silentLookup(Responses.query(scopes: ["Files.Read"]))
            #expect(try own.refreshToken?.entity.secret.reveal() == "own-rt" && own.familyMembership == .notMember)
            // The member: the family RT.
            let member = try cache.silentLookup(Responses.query(client: Responses.familyMember, scopes: ["Files.Read"]))
            #expect(try member.refreshToken?.entity.secret.reveal() == "family-rt" && member.familyMembership == .member)
            // A client never seen (no app metadata): the family RT may be tried, flagged as a trial.
            let unknown = try cache.silentLookup(Responses.query(client: "11111111-2222-3333-4444-555555555555", scopes: ["Files.Read"]))
            #expect(try unknown.outcome == .refresh && unknown.refreshToken?.entity.familyID == "1" && unknown.familyMembership == .unknown)
            // A later response without foci clears the member's family flag.
            try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: "member-own")), context: try Responses.context(client: Responses.familyMember))
            #expect(try cache.silentLookup(Responses.query(client: Responses.familyMember, scopes: ["Files.Read"])).refreshToken?.entity.secret.reveal() == "member-own")
        }
    }

    @Test(arguments: TestBackend.allCases)
    func refreshTokenRotationIsACompareAndSwap(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: "rt-1")), context: try Responses.context())
            let current = try #require(try cache.silentLookup(Responses.query()).refreshToken)
            var rotated = current.entity
            rotated.secret = Secret("rt-2")
            try cache.replaceRefreshToken(rotated, expectedSecret: Secret("rt-1"))
            var stale = current.entity
            stale.secret = Secret("rt-stale")
            let lost = try #require(throws: TokenCacheError.self) { try cache.replaceRefreshToken(stale, expectedSecret: Secret("rt-1")) }
            #expect(lost.code == .conflict && lost.currentRevision == current.revision + 1)
            #expect(try cache.silentLookup(Responses.query()).refreshToken?.entity.secret.reveal() == "rt-2")
        }
    }

    @Test(arguments: TestBackend.allCases)
    func anIDTokenLessResponseDoesNotClobberTheAccount(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.ingest(try TokenResponse(json: Responses.json()), context: try Responses.context())
            try cache.ingest(try TokenResponse(json: Responses.json(accessToken: "at-2", idToken: nil)), context: try Responses.context(grantType: "refresh_token"))
            let account = try #require(try cache.silentLookup(Responses.query()).account).entity
            #expect(account.username == User.username && account.localAccountID == User.uid)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func reIngestingKeepsUnknownFieldsAndContinuesRevisions(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let first = try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: "rt-1")), context: try Responses.context())
            let accessToken = first.accessTokenRevision
            #expect(backend.isFirst(accessToken))
            let stored = try #require(try cache.silentLookup(Responses.query()).refreshToken)
            var refresh = stored.entity
            #expect(backend.isFirst(stored.revision))
            refresh.additionalFields["x_foreign"] = .string("kept")
            #expect(try cache.put(refresh) == stored.revision + 1)
            let storedAccount = try #require(try cache.silentLookup(Responses.query()).account)
            var account = storedAccount.entity
            account.additionalFields["x_profile"] = .integer(7)
            try cache.put(account)
            let result = try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: "rt-2")), context: try Responses.context())
            #expect(result.refreshTokenRevision == stored.revision + 2)
            // The access token the response replaces is evicted (same scopes) and written again: its revision goes on.
            #expect(result.accessTokenRevision == accessToken + 1 && result.accessTokensRemoved == 1)
            let after = try cache.silentLookup(Responses.query())
            #expect(after.accessToken?.revision == accessToken + 1)
            #expect(try after.refreshToken?.entity.secret.reveal() == "rt-2")
            #expect(try after.refreshToken?.entity.additionalFields["x_foreign"] == .string("kept"))
            #expect(try after.account?.entity.additionalFields["x_profile"] == .integer(7))
            #expect(try after.account?.revision == storedAccount.revision + 2)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func malformedResponsesWriteNothing(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let bad: [Data] = [
                Data(#"{"token_type":"Bearer","expires_in":3600}"#.utf8),
                Data(Responses.json(expiresIn: -5).utf8),
                Data(Responses.json(idToken: "not-a-jwt").utf8),
                Data(Responses.json(clientInfo: "%%%").utf8),
                Data("[]".utf8),
            ]
            for body in bad {
                let code = errorCode { try cache.ingest(try TokenResponse(json: body), context: try Responses.context()) }
                #expect(code == .invalidArgument, "\(String(decoding: body, as: UTF8.self))")
            }
            let total = try cache.info().recordCounts.values.reduce(0, +)
            #expect(total == 0)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func accountsListOneEntryPerHomeAccountWithTenantProfiles(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.ingest(try TokenResponse(json: Responses.json()), context: try Responses.context())
            let guest = "72f988bf-86f1-41af-91ab-2d7cd011db47"
            try cache.ingest(
                try TokenResponse(json: Responses.json(accessToken: "guest-at", idToken: Responses.idToken(tid: guest, oid: "guest-oid"))),
                context: try Responses.context(authority: "https://login.microsoftonline.com/\(guest)")
            )
            let listing = try cache.accounts()
            #expect(listing.accounts.count == 1)
            #expect(listing.accounts[0].profiles.map(\.entity.realm) == [User.utid, guest])
            #expect(try cache.accounts(clientID: User.client).accounts.count == 1)
            // Another client has no refresh token of its own and there is no family token: not listed for it.
            #expect(try cache.accounts(clientID: "not-a-client-of-this-account").accounts.isEmpty)
            #expect(try cache.accounts(username: User.username.uppercased()).accounts.count == 1)
            #expect(try cache.accounts(username: "nobody@contoso.example").accounts.isEmpty)
            #expect(try cache.accounts(environment: "login.chinacloudapi.cn").accounts.isEmpty)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func signOutForOneClientKeepsOtherClientsAndAppMetadata(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: "member-family", foci: "1")), context: try Responses.context(client: Responses.familyMember))
            try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: "own")), context: try Responses.context())
            let removed = try cache.removeAccount(homeAccountID: User.home, clientID: Responses.familyMember)
            #expect(removed.accessTokens == 1 && removed.idTokens == 1 && removed.refreshTokens == 1 && removed.accounts == 1)
            #expect(try cache.list(RefreshToken.self).records.map { $0.entity.secret.reveal() } == ["own"])
            #expect(try cache.list(AccessToken.self).records.count == 1)
            #expect(try cache.list(AppMetadata.self).records.count == 2)
            let everywhere = try cache.removeAccount(homeAccountID: User.home, clientID: nil)
            #expect(everywhere.accessTokens == 1 && everywhere.refreshTokens == 1)
            #expect(try cache.silentLookup(Responses.query()).outcome == .interactionRequired)
            #expect(try cache.list(AppMetadata.self).records.count == 2)
        }
    }
}

@Suite struct RotationRaceTests {
    /// Threads repeatedly read the refresh token, "redeem" it, and swap in a successor named after the one they
    /// read. Every success must extend the chain by exactly one: revision = first + successes, and the final token
    /// names its predecessor. A lost update would break the chain.
    @Test(arguments: TestBackend.allCases)
    func concurrentRotationsNeverLoseTheNewerToken(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let first = try #require(
                try cache.ingest(try TokenResponse(json: Responses.json(refreshToken: "g0")), context: try Responses.context()).refreshTokenRevision
            )
            let successes = Mutex(0)
            let chain = Mutex<[String: String]>([:])  // successor -> predecessor
            DispatchQueue.concurrentPerform(iterations: 4) { worker in
                for round in 0..<40 {
                    guard let current = try? cache.silentLookup(Responses.query()).refreshToken else { continue }
                    let predecessor = current.entity.secret.reveal()
                    var successor = current.entity
                    let name = "w\(worker)r\(round)"
                    successor.secret = Secret(name)
                    usleep(UInt32.random(in: 0...200))  // the network round trip, outside any transaction
                    if (try? cache.replaceRefreshToken(successor, expectedSecret: Secret(predecessor))) != nil {
                        successes.withLock { $0 += 1 }
                        chain.withLock { $0[name] = predecessor }
                    }
                }
            }
            let wins = successes.withLock { $0 }
            let final = try #require(try cache.silentLookup(Responses.query()).refreshToken)
            #expect(wins > 0)
            #expect(final.revision == first + UInt64(wins))
            // Walk the chain back from the final token to g0: every success is on it exactly once.
            let links = chain.withLock { $0 }
            var seen = 0
            var name = final.entity.secret.reveal()
            while let previous = links[name] {
                seen += 1
                name = previous
            }
            #expect(name == "g0" && seen == wins)
        }
    }
}
