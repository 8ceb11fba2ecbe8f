import Foundation
import Synchronization
import Testing
import TokenCacheClient

/// The client type, under a name the snippet's stand-in below does not shadow.
private typealias RealClient = TokenCacheClient

/// The README's async-client snippet (also the DocC article "Getting started"'s), compiled and run: it holds the snippet verbatim (between the `README snippet`
/// markers), with the names the README leaves to the reader defined around it, and ``snippetMatchesTheReadme()``
/// fails when the README and this file drift apart.
@Suite struct ReadmeClientExampleTests {
    /// What the snippet's sign-in and token endpoint were asked.
    final class Calls: Sendable {
        let state = Mutex((signIns: [String?](), redemptions: [String]()))
    }

    @Test func theSnippetSignsInAnswersFromTheCacheRefreshesAndSignsInAgain() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("token-cache-readme-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try KeyFile.create(at: root + "/key")
        let clock = TestClock()
        let calls = Calls()
        // Stands in for the client's initializer: the README opens the store the environment names; here a temporary
        // one is opened, on a clock the test moves.
        func TokenCacheClient(configuration ignored: Configuration) throws -> RealClient {
            try RealClient(configuration: Configuration(directory: root + "/store", keySource: .keyFile(path: root + "/key")), clock: clock)
        }
        let clientID = User.client
        func signIn(loginHint: String?) async throws -> Data {
            let number = calls.state.withLock { state in
                state.signIns.append(loginHint)
                return state.signIns.count + state.redemptions.count
            }
            return Responses.json(accessToken: "at-\(number)", refreshToken: "rt-\(number)", issuedAt: clock.now())
        }
        struct TokenEndpoint: Sendable {
            let calls: Calls
            let clock: TestClock
            func redeem(_ refreshToken: Secret, scopes: [String]) async throws -> Data {
                let number = calls.state.withLock { state in
                    state.redemptions.append(refreshToken.reveal())
                    return state.signIns.count + state.redemptions.count
                }
                return Responses.json(accessToken: "at-\(number)", refreshToken: "rt-\(number)", issuedAt: clock.now())
            }
        }
        let tokenEndpoint = TokenEndpoint(calls: calls, clock: clock)

        // README snippet 1 begin
        let client = try TokenCacheClient(configuration: .fromEnvironment())   // one per process, shared by every task
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
                    try TokenResponse(json: await tokenEndpoint.redeem(refreshToken, scopes: scopes))
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

    @Test func snippetMatchesTheReadme() throws {
        let here = URL(fileURLWithPath: #filePath)
        let readme = try String(contentsOf: here.deletingLastPathComponent().appendingPathComponent("../../README.md").standardized, encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        func normalized(_ text: some StringProtocol) -> [String] {
            text.split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
                .filter { !$0.isEmpty }
        }
        let sourceLines = normalized(source)
        let block = try #require(readme.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "```").first)
        var lines = normalized(block)
        #expect(lines.first == "import TokenCacheClient")
        lines.removeFirst()
        let begin = try #require(sourceLines.firstIndex(of: "// README snippet 1 begin"))
        let end = try #require(sourceLines.firstIndex(of: "// README snippet 1 end"))
        #expect(Array(sourceLines[(begin + 1)..<end]) == lines, "README snippet 1 differs from this file's copy")
        // The DocC article "Getting started" shows the same snippet.
        let article = try String(
            contentsOf: here.deletingLastPathComponent().appendingPathComponent("../../Sources/TokenCacheClient/TokenCacheClient.docc/GettingStarted.md")
                .standardized, encoding: .utf8
        )
        let articleBlocks = article.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(articleBlocks.count == 1)
        #expect(articleBlocks.first.map(normalized) == normalized(block), "the Getting started article's snippet differs from the README's")
    }
}
