import Foundation
import TestSupport
import Testing
import TokenCache

@testable import TokenCache

/// The README's Swift snippets, compiled and run: each test below holds one snippet verbatim (between the
/// `README snippet` markers), with the names the README leaves to the reader defined around it, and
/// ``snippetsMatchTheReadme()`` fails when the README and this file drift apart.
@Suite struct ReadmeExampleTests {
    /// A client: first nothing is cached (sign in), then the access token is a hit, and after it expired its refresh
    /// token is redeemed; the refresh grant's response adds `foci`, so the rotated token becomes the family's.
    @Test func silentFlow() throws {
        try withTemporaryDirectory { root in
            let keyFile = root + "/key"
            try KeyFile.create(at: keyFile)
            // Stands in for the library's `TokenStore` in the snippet: the README opens the store the environment
            // names; here a temporary one is opened instead (setting the process environment would reach the other
            // tests and the processes they start).
            let TokenStore = TemporaryStoreOpener(configuration: Configuration(directory: root + "/store", keySource: .keyFile(path: keyFile)))
            var used: [String] = []
            var redeemed: [String] = []
            var signIns = 0
            // What the snippet leaves to the reader, declared as the README declares it.
            let clientID: String = User.client
            let homeAccountID: String = User.home
            let authorityURL: String = "https://login.microsoftonline.com/common"
            func use(_ accessToken: String, refreshSoon: Bool) { used.append(accessToken) }
            func redeem(_ refreshToken: String) throws -> String {
                redeemed.append(refreshToken)
                return Responses.json(accessToken: "at-2", refreshToken: "rt-2", idToken: nil, foci: "1")
            }
            func signIn() throws -> String {
                signIns += 1
                return Responses.json(accessToken: "at-1", refreshToken: "rt-1")
            }

            func silentFlow(at time: Int64) throws -> StoredEntity<Account>? {
                let now: Int64 = time
                // README snippet 2 begin
                // Yours: the ids of the app and of the signed-in account, the authority, the time, what uses the token, and two
                // calls to your identity provider returning the token endpoint's response body.
                //   let clientID: String
                //   let homeAccountID: String
                //   let authorityURL: String
                //   let now: Int64                                          // Unix seconds
                //   func use(_ accessToken: String, refreshSoon: Bool)
                //   func redeem(_ refreshToken: String) throws -> String    // grant_type=refresh_token
                //   func signIn() throws -> String                          // interactive sign-in

                let cache = try TokenStore.openOrCreate(.fromEnvironment())   // defaults below
                let authority = try Authority(authorityURL)

                // Is there a usable access token, and if not, which refresh token to redeem?
                let answer = try cache.silentLookup(SilentLookupQuery(clientID: clientID, homeAccountID: homeAccountID,
                                                                      authority: authority, scopes: ["User.Read"], now: now))
                switch answer.outcome {
                case .hit:
                    use(answer.accessToken!.entity.secret.reveal(), refreshSoon: answer.refreshRecommended)
                case .refresh:
                    // Redeem the refresh token (grant_type=refresh_token). The response carries the rotated refresh token, which
                    // replaces the redeemed one only if no other process rotated that meanwhile (else .conflict, and nothing of
                    // this response is written: look up again); the rest of the response is ingested in the same transaction.
                    let redeemed = try answer.refreshToken!
                    let response = try TokenResponse(json: redeem(redeemed.entity.secret.reveal()))
                    try cache.write { writer in
                        if let rotatedSecret = response.refreshToken {
                            let rotated = RefreshToken(homeAccountID: redeemed.entity.homeAccountID,
                                                       environment: redeemed.entity.environment, clientID: clientID,
                                                       secret: rotatedSecret, familyID: response.foci)
                            try writer.replaceRefreshToken(rotated, expectedSecret: redeemed.entity.secret)
                        }
                        try writer.ingest(response, context: TokenRequestContext(clientID: clientID, authority: authority,
                                                                                 requestedScopes: ["User.Read"],
                                                                                 grantType: "refresh_token", now: now))
                    }
                case .interactionRequired:
                    // After any other token-endpoint call: store what the response yields (AT, RT, ID token, account, app
                    // metadata), derived as MSAL derives it, in one durable transaction. Malformed responses are rejected;
                    // nothing is written.
                    let responseBody = try signIn()
                    try cache.ingest(try TokenResponse(json: responseBody),
                                     context: TokenRequestContext(clientID: clientID, authority: authority, requestedScopes: ["User.Read"],
                                                                  grantType: "authorization_code", now: now))
                }
                let user = try answer.account                    // the companions of a hit are read on first access (below)
                // README snippet 2 end
                return user
            }

            #expect(try silentFlow(at: Samples.now) == nil && signIns == 1)
            #expect(try silentFlow(at: Samples.now + 60)?.entity.username == User.username && used == ["at-1"])
            #expect(try silentFlow(at: Samples.now + 3600) != nil && redeemed == ["rt-1"])
            #expect(try silentFlow(at: Samples.now + 3660) != nil && used == ["at-1", "at-2"] && signIns == 1)

            let cache = try TokenStore.openOrCreate(.fromEnvironment())
            let tokens = try cache.list(RefreshToken.self).records.map(\.entity)
            #expect(tokens.map { $0.secret.reveal() } == ["rt-2"] && tokens.first?.familyID == "1")
            #expect(try cache.list(AppMetadata.self).records.map(\.entity.familyID) == ["1"])
            #expect(try cache.get(tokens[0].key)?.revision == 2)  // replaced, then the response's own fields ingested
        }
    }

    @Test func directAccess() throws {
        try TestStore.with { _, cache in
            let account: Account = Samples.account()
            let accessToken: AccessToken = Samples.accessToken()
            // README snippet 3 begin
            // Yours: the records to write (built with the entities' initializers), and the store opened above.
            //   let account: Account
            //   let accessToken: AccessToken

            try cache.write { writer in                                    // one durable transaction: all or nothing
                try writer.put(account)
                try writer.put(accessToken)
            }
            if let stored = try cache.get(accessToken.key) {
                print(stored.entity.secret)          // prints <redacted>; stored.entity.secret.reveal() is the token
                var extended = stored.entity
                extended.extendedExpiresOn = (extended.extendedExpiresOn ?? extended.expiresOn) + 3600
                try cache.put(extended, expectedRevision: stored.revision)  // .conflict if the revision moved
            }
            // README snippet 3 end
            let stored = try #require(try cache.get(accessToken.key))
            #expect(stored.revision == 2 && stored.entity.extendedExpiresOn == (accessToken.extendedExpiresOn ?? accessToken.expiresOn) + 3600)
            #expect(try cache.get(account.key) != nil)
        }
    }

    /// Each ```swift block of README.md about the store appears in this file, line by line and in order (whitespace
    /// runs count as one space, blank lines are ignored), with what it leaves to the reader declared as it declares
    /// it; its `import TokenCache` is at the top of this file. The async client's blocks are ReadmeClientExampleTests',
    /// and the Package.swift excerpt is not code of this package.
    @Test func snippetsMatchTheReadme() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = try ReadmeSnippets().blocks
        let storeBlocks = blocks.filter {
            $0.first != "import TokenCacheClient" && $0.first != "// Package.swift of your app" && !($0.first ?? "").hasPrefix("// Server flows.")
        }
        #expect(blocks.count == 5 && storeBlocks.count == 2)
        #expect(storeBlocks.first?.first == "import TokenCache")
        for (index, block) in storeBlocks.enumerated() {
            let problems = ReadmeSnippets.problems(block: block, number: index + 2, source: source, droppingImport: "import TokenCache")
            #expect(problems.isEmpty, "\(problems)")
            #expect(!ReadmeSnippets.declarationsLeftToTheReader(block).isEmpty)
        }
    }
}

/// Opens its one store whatever configuration it is asked for: see ``ReadmeExampleTests/silentFlow()``.
private struct TemporaryStoreOpener {
    let configuration: Configuration
    func openOrCreate(_ ignored: Configuration) throws -> TokenStore { try TokenStore.openOrCreate(configuration) }
}
