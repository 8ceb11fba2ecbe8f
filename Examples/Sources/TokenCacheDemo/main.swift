import Foundation
import TokenCacheClient

// token-cache-demo walkthrough|token|signout ENDPOINT DIR
//
// walkthrough: signs in against ENDPOINT (a token endpoint such as the fake one beside this package), keeps the
// tokens in a store in DIR, and shows the silent flow: a hit, an L1 hit, a refresh, two processes refreshing at once,
// a change notification from another process, and interaction required. `token` and `signout` are the other
// process's parts.

let arguments = CommandLine.arguments
guard arguments.count == 4, let endpoint = URL(string: arguments[2]) else {
    FileHandle.standardError.write("usage: token-cache-demo walkthrough|token|signout ENDPOINT DIR\n".data(using: .utf8)!)
    exit(64)
}
let directory = arguments[3]
let clientID = "3c5e9a7b-2f14-4d8e-b6a0-9d1c7e4f2a53"
let scopes = ["User.Read"]
let provider = IdentityProvider(endpoint: endpoint, clientID: clientID)

func openClient() throws -> TokenClient {
    if !FileManager.default.fileExists(atPath: directory + "/key") {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try KeyFile.create(at: directory + "/key")
    }
    return try TokenClient(
        configuration: Configuration(directory: directory + "/store", keySource: .keyFile(path: directory + "/key")),
        changePollInterval: .milliseconds(50)
    )
}

let authority = try Authority("https://login.microsoftonline.com/organizations")

/// The silent flow an app runs before every call of its API.
func accessToken(_ client: TokenClient) async throws -> TokenResult {
    guard let account = try await client.currentAccount(clientID: clientID) else { throw DemoError("nobody is signed in") }
    let request = TokenRequest(clientID: clientID, account: account, authority: authority, scopes: scopes)
    return try await client.token(for: request) { refreshToken, scopes in try await provider.redeem(refreshToken, scopes: scopes) }
}

/// A token and where this call got it from: the client's counters before and after the call tell.
func describedToken(_ client: TokenClient) async throws -> String {
    let before = client.statistics
    let token = try await accessToken(client)
    let after = client.statistics
    switch token.source {
    case .cache where after.answerCacheHits > before.answerCacheHits: return "from the cache (the in-process L1)"
    case .cache: return "from the cache"
    case .refresh where after.refreshes == before.refreshes && after.leaseWaits > before.leaseWaits:
        return "refreshed by another process (this one waited for its refresh lease)"
    case .refresh: return "refreshed (the refresh token was redeemed and rotated)"
    case .acquired: return "acquired (a new grant, without a refresh token)"
    }
}

/// Runs another copy of this program.
func spawn(_ command: String) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = [command, endpoint.absoluteString, directory]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    return process
}

func output(of process: Process) -> String {
    process.waitUntilExit()
    let data = (process.standardOutput as! Pipe).fileHandleForReading.readDataToEndOfFile()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

func waitUntilStale() async throws {
    // The provider's tokens live 302 s; the cache wants 300 s left.
    print("   (waiting 3 s for the token to come within 300 s of its expiry)")
    try await Task.sleep(for: .seconds(3))
}

do {
    switch arguments[1] {
    case "token":
        let client = try openClient()
        print(try await describedToken(client))
    case "signout":
        let client = try openClient()
        guard let account = try await client.currentAccount(clientID: clientID) else { throw DemoError("nobody is signed in") }
        try await client.signOut(homeAccountID: account.homeAccountID, clientID: nil)
    case "walkthrough":
        let client = try openClient()
        print("1. Sign in")
        try await client.ingest(try await provider.signIn(scopes: scopes), clientID: clientID, authority: authority, scopes: scopes)
        let account = try await client.currentAccount(clientID: clientID)
        print("   signed in as \(account?.claims.name ?? "?") <\(account?.username ?? "?")>")

        print("2. Silent, twice")
        print("   token " + (try await describedToken(client)))
        print("   token " + (try await describedToken(client)))

        print("3. Silent, once the token is about to expire")
        try await waitUntilStale()
        print("   token " + (try await describedToken(client)))

        print("4. Two processes at once, both needing a refresh")
        try await waitUntilStale()
        let before = try await provider.stats()["redemptions"] ?? 0
        let children = try [spawn("token"), spawn("token")]
        for (index, child) in children.enumerated() { print("   process \(index + 1): token " + output(of: child)) }
        let redemptions = (try await provider.stats()["redemptions"] ?? 0) - before
        print("   the identity provider redeemed \(redemptions) refresh token\(redemptions == 1 ? "" : "s") for the two")

        print("5. Change notifications")
        let changes = client.changes()
        let listener = Task { () -> [String] in
            var seen: [String] = []
            for await change in changes {
                switch change {
                case .accountRemoved(let account): seen.append("account removed: \(account.username ?? "?")")
                case .accountAdded(let account): seen.append("account added: \(account.username ?? "?")")
                default: continue
                }
                if seen.contains(where: { $0.hasPrefix("account removed") }) { break }
            }
            return seen
        }
        _ = output(of: try spawn("signout"))
        let timeout = Task {
            try await Task.sleep(for: .seconds(10))
            listener.cancel()
        }
        for line in await listener.value { print("   another process signed out; this one heard: \(line)") }
        timeout.cancel()

        print("6. Interaction required")
        try await client.ingest(try await provider.signIn(scopes: scopes), clientID: clientID, authority: authority, scopes: scopes)
        try await provider.revokeEverything()
        print("   signed in again; the provider then revoked every refresh token")
        try await waitUntilStale()
        do {
            _ = try await accessToken(client)
            print("   token: unexpected")
        } catch let error as TokenClientError where error.code == .interactionRequired {
            print("   interaction required: sign \(error.accountHint?.username ?? "?") in again")
        }
        let stats = try await provider.stats()
        print("identity provider: \(stats["sign_ins"] ?? 0) sign-ins, \(stats["redemptions"] ?? 0) redemptions, \(stats["refused"] ?? 0) refused")
    default:
        FileHandle.standardError.write("unknown command \(arguments[1])\n".data(using: .utf8)!)
        exit(64)
    }
} catch {
    // One line, not a backtrace: what went wrong is the token endpoint or the store, not this program.
    FileHandle.standardError.write("token-cache-demo: \(error)\n".data(using: .utf8)!)
    exit(1)
}
