import Foundation
import Synchronization
import Testing
import TokenCacheClient
import TestSupport

/// The client type, under a name the snippet's stand-in below does not shadow.
private typealias RealClient = TokenClient

/// The README's async-client snippet (also the DocC article "Getting started"'s), compiled and run: it holds the snippet verbatim (between the `README snippet`
/// markers), with the names the README leaves to the reader defined around it, and ``snippetMatchesTheReadme()``
/// fails when the README and this file drift apart.
@Suite struct ReadmeClientExampleTests {
    /// What the snippet's sign-in and token endpoint were asked.
    final class Calls: Sendable {
        let state = Mutex((signIns: [String?](), redemptions: [String]()))
    }

    @Test func theSnippetSignsInAnswersFromTheCacheRefreshesAndSignsInAgain() async throws {
        let root = try makeTemporaryDirectory(prefix: "token-cache-readme")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeyFile.create(at: root + "/key")
        let clock = TestClock()
        let calls = Calls()
        // Stands in for the client's initializer: the README opens the store the environment names; here a temporary
        // one is opened, on a clock the test moves.
        func TokenClient(configuration ignored: Configuration) throws -> RealClient {
            try RealClient(configuration: Configuration(directory: root + "/store", keySource: .keyFile(path: root + "/key")), clock: clock)
        }
        // What the snippet leaves to the reader, declared as the README declares it.
        let clientID: String = User.client
        @Sendable func signIn(loginHint: String?) async throws -> String {
            let number = calls.state.withLock { state in
                state.signIns.append(loginHint)
                return state.signIns.count + state.redemptions.count
            }
            return Responses.json(accessToken: "at-\(number)", refreshToken: "rt-\(number)", idToken: Responses.idToken(issuedAt: clock.now()))
        }
        @Sendable func redeem(refreshToken: String, scopes: [String]) async throws -> String {
            let number = calls.state.withLock { state in
                state.redemptions.append(refreshToken)
                return state.signIns.count + state.redemptions.count
            }
            return Responses.json(accessToken: "at-\(number)", refreshToken: "rt-\(number)", idToken: Responses.idToken(issuedAt: clock.now()))
        }

        // README snippet 1 begin
        // Yours (the library does no HTTP): the app's client id, and two calls to your identity provider, each returning
        // the token endpoint's response body as it came (a String here; Data and [UInt8] are accepted too).
        //   let clientID: String
        //   func signIn(loginHint: String?) async throws -> String                       // interactive sign-in
        //   func redeem(refreshToken: String, scopes: [String]) async throws -> String   // grant_type=refresh_token

        let client = try TokenClient(configuration: .fromEnvironment())   // one per process, shared by every task
        let authority = try Authority("https://login.microsoftonline.com/common")

        func accessToken() async throws -> String {
            guard let account = try await client.currentAccount(clientID: clientID) else {
                // Nobody signed in yet: sign in interactively and store what the token endpoint returned.
                try await client.ingest(TokenResponse(json: await signIn(loginHint: nil)), clientID: clientID,
                                        authority: authority, scopes: ["User.Read"])
                return try await accessToken()
            }
            let request = TokenRequest(clientID: clientID, account: account, authority: authority, scopes: ["User.Read"])
            do {
                // From the cache, or redeemed once however many tasks and processes ask at the same moment.
                let token = try await client.token(for: request) { refreshToken, scopes in
                    try TokenResponse(json: await redeem(refreshToken: refreshToken.reveal(), scopes: scopes))
                }
                print("hello,", try token.account?.claims.name ?? "you")
                return token.value
            } catch let error as TokenClientError where error.code == .interactionRequired {
                // The refresh token is gone (signed out elsewhere, say): sign in again, the username pre-filled.
                try await client.ingest(TokenResponse(json: await signIn(loginHint: error.accountHint?.username)),
                                        clientID: clientID, authority: authority, scopes: ["User.Read"])
                return try await accessToken()
            }
        }
        // README snippet 1 end

        // First run: a sign-in. Then the cache, then its L1.
        #expect(try await accessToken() == "at-1")
        #expect(try await accessToken() == "at-1")
        #expect(client.statistics.answerCacheHits == 1)
        // Two hours later: one refresh of the first refresh token.
        clock.advance(by: 7200)
        #expect(try await accessToken() == "at-2")
        // The refresh token lost: a sign-in with the username as the hint.
        let refreshToken = try #require(try await client.lookup(TokenRequest(clientID: clientID, homeAccountID: User.home, authority: authority, scopes: ["Other.Scope"])).refreshToken)
        try client.store.delete(refreshToken.entity.key)
        clock.advance(by: 7200)
        #expect(try await accessToken() == "at-3")
        let (signIns, redemptions) = calls.state.withLock { ($0.signIns, $0.redemptions) }
        #expect(signIns == [nil, User.username])
        #expect(redemptions == ["rt-1"])
    }

    /// The README's server-flows snippet: an app token per FMI path and a token per web API caller, each obtained once
    /// and then answered from the cache.
    @Test func theServerFlowsSnippetAcquiresOnceAndThenAnswersFromTheCache() async throws {
        let root = try makeTemporaryDirectory(prefix: "token-cache-readme-server")
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeyFile.create(at: root + "/key")
        let calls = Mutex([String]())
        // What the snippet leaves to the reader, declared as the README declares it.
        let client: TokenClient = try RealClient(configuration: Configuration(directory: root + "/store", keySource: .keyFile(path: root + "/key")))
        let clientID: String = User.client
        let tenant: Authority = try Authority("https://login.microsoftonline.com/\(User.utid)")
        @Sendable func clientCredentials(scopes: [String], fmiPath: String) async throws -> String {
            let number = calls.withLock { $0.append(fmiPath); return $0.count }
            return Responses.json(accessToken: "app-\(number)", scope: scopes.joined(separator: " "), refreshToken: nil, idToken: nil, clientInfo: nil)
        }
        @Sendable func exchange(assertion: String, scopes: [String]) async throws -> String {
            let number = calls.withLock { $0.append(assertion); return $0.count }
            return Responses.json(accessToken: "obo-\(number)", scope: scopes.joined(separator: " "), refreshToken: "rt-obo-\(number)")
        }

        // README snippet 4 begin
        // Server flows. Yours: the client, the app's client id and tenant, and two grants of your token endpoint, each
        // returning its response body as it came.
        //   let client: TokenClient
        //   let clientID: String
        //   let tenant: Authority
        //   func clientCredentials(scopes: [String], fmiPath: String) async throws -> String
        //   func exchange(assertion: String, scopes: [String]) async throws -> String   // on-behalf-of (jwt-bearer)

        // The app's own token in its tenant, for one federated managed identity path.
        func appToken(fmiPath: String) async throws -> String {
            let request = TokenRequest.app(clientID: clientID, authority: tenant, scopes: ["api://backend/.default"],
                                           extendedCacheKey: ExtendedCacheKey(parameters: ["fmi_path": fmiPath]))
            return try await client.token(for: request) { scopes in
                try TokenResponse(json: await clientCredentials(scopes: scopes, fmiPath: fmiPath))
            }.value
        }

        // A token to call the next API for the caller whose incoming token is `assertion`.
        func downstreamToken(assertion: String) async throws -> String {
            let request = TokenRequest.onBehalfOf(OnBehalfOfKey(assertion: Secret(assertion)), clientID: clientID,
                                                  authority: tenant, scopes: ["User.Read"])
            return try await client.token(for: request) { scopes in
                try TokenResponse(json: await exchange(assertion: assertion, scopes: scopes))
            }.value
        }
        // README snippet 4 end

        for _ in 0..<2 {
            #expect(try await appToken(fmiPath: "Agents/a") == "app-1")
            #expect(try await appToken(fmiPath: "Agents/b") == "app-2")
            #expect(try await downstreamToken(assertion: "caller-1-token") == "obo-3")
            #expect(try await downstreamToken(assertion: "caller-2-token") == "obo-4")
        }
        #expect(calls.withLock { $0 } == ["Agents/a", "Agents/b", "caller-1-token", "caller-2-token"])
    }

    @Test func theServerFlowsSnippetMatchesTheReadme() throws {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let blocks = try ReadmeSnippets().blocks.filter { ($0.first ?? "").hasPrefix("// Server flows.") }
        #expect(blocks.count == 1)
        let block = try #require(blocks.first)
        let problems = ReadmeSnippets.problems(block: block, number: 4, source: source, droppingImport: "")
        #expect(problems.isEmpty, "\(problems)")
        #expect(ReadmeSnippets.declarationsLeftToTheReader(block).count == 5)
    }

    @Test func snippetMatchesTheReadme() throws {
        let here = URL(fileURLWithPath: #filePath)
        let source = try String(contentsOf: here, encoding: .utf8)
        let blocks = try ReadmeSnippets().blocks.filter { $0.first == "import TokenCacheClient" }
        #expect(blocks.count == 1)
        let block = try #require(blocks.first)
        let problems = ReadmeSnippets.problems(block: block, number: 1, source: source, droppingImport: "import TokenCacheClient")
        #expect(problems.isEmpty, "\(problems)")
        #expect(ReadmeSnippets.declarationsLeftToTheReader(block).count == 3)
        // The DocC article "Getting started" shows the same snippet.
        let article = try String(
            contentsOf: here.deletingLastPathComponent().appendingPathComponent("../../Sources/TokenCacheClient/TokenCacheClient.docc/GettingStarted.md")
                .standardized, encoding: .utf8
        )
        let articleBlocks = article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(articleBlocks.count == 1)
        #expect(articleBlocks.first.map(ReadmeSnippets.normalized) == block, "the Getting started article's snippet differs from the README's")
    }
}
