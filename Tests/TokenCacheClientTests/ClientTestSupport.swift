import Foundation
import Synchronization
import TestSupport
import TokenCache
import TokenCacheClient

/// A clock the test moves.
final class TestClock: WallClock {
    private let time: Atomic<Int64>
    init(_ start: Int64 = ReferenceTime.now) { time = Atomic(start) }
    func now() -> Int64 { time.load(ordering: .relaxed) }
    func advance(by seconds: Int64) { time.wrappingAdd(seconds, ordering: .relaxed) }
}

/// The requests the client tests make for TestSupport's user.
extension User {
    static let authority = try! Authority("https://login.microsoftonline.com/common")

    static func request(scopes: [String] = ["User.Read"], forceRefresh: Bool = false, home: String = home) -> TokenRequest {
        TokenRequest(clientID: client, homeAccountID: home, authority: authority, scopes: scopes, forceRefresh: forceRefresh)
    }
}

extension Responses {
    /// A response as the library parsed it, for a user signed in at `issuedAt`; its ID token has a claim the
    /// library does not model (`groups`).
    static func response(
        accessToken: String, refreshToken: String?, expiresIn: Int64 = 3600, refreshIn: Int64? = nil, scope: String = "User.Read openid profile offline_access",
        uid: String = User.uid, utid: String = User.utid, username: String = User.username, issuedAt: Int64
    ) -> TokenResponse {
        var claimsWithGroups = claims(tid: utid, oid: uid, username: username, issuedAt: issuedAt)
        claimsWithGroups["groups"] = ["g1"]
        let json = Responses.json(
            accessToken: accessToken, scope: scope, expiresIn: Int(expiresIn), refreshToken: refreshToken,
            idToken: idToken(claimsJSON: jsonText(claimsWithGroups)), clientInfo: clientInfo(uid: uid, utid: utid),
            refreshIn: refreshIn.map(Int.init)
        )
        return try! TokenResponse(json: json)
    }
}

/// A token endpoint in memory: redeems refresh tokens it issued, rotating each (a redeemed token stops working,
/// as with a strict rotating server), and counts what it was asked.
final class FakeTokenEndpoint: Sendable {
    struct InvalidGrant: Error, Equatable {}
    struct Unavailable: Error, Equatable {}

    private struct State {
        var valid: Set<String> = []
        var issued = 0
        var redeemed: [String] = []
        var failNext = false
    }

    private let state = Mutex(State())
    let clock: TestClock
    /// How long each redemption takes.
    let latency: Duration
    let refreshIn: Int64?

    init(clock: TestClock, latency: Duration = .zero, refreshIn: Int64? = nil) {
        self.clock = clock
        self.latency = latency
        self.refreshIn = refreshIn
    }

    /// What an interactive sign-in returns: a first access and refresh token.
    func signIn(username: String = User.username, uid: String = User.uid) -> TokenResponse {
        let number = state.withLock { state in
            state.issued += 1
            state.valid.insert("rt-\(state.issued)")
            return state.issued
        }
        return Responses.response(accessToken: "at-\(number)", refreshToken: "rt-\(number)", refreshIn: refreshIn, uid: uid, username: username, issuedAt: clock.now())
    }

    /// `grant_type=refresh_token`.
    func redeem(_ refreshToken: Secret, scopes: [String]) async throws -> TokenResponse {
        if latency > .zero { try await Task.sleep(for: latency) }
        let number = try state.withLock { state in
            state.redeemed.append(refreshToken.reveal())
            if state.failNext {
                state.failNext = false
                throw Unavailable()
            }
            guard state.valid.remove(refreshToken.reveal()) != nil else { throw InvalidGrant() }
            state.issued += 1
            state.valid.insert("rt-\(state.issued)")
            return state.issued
        }
        return Responses.response(
            accessToken: "at-\(number)", refreshToken: "rt-\(number)", refreshIn: refreshIn, scope: scopes.joined(separator: " "),
            issuedAt: clock.now()
        )
    }

    /// The refresh tokens redeemed so far, in order.
    var redeemed: [String] { state.withLock { $0.redeemed } }
    /// Makes the next redemption fail as an unavailable server would.
    func failNextRedemption() { state.withLock { $0.failNext = true } }
}

/// A new client of a new store in a temporary directory, removed afterwards.
func withClient<R>(clock: TestClock = TestClock(), _ body: (TokenClient) async throws -> R) async throws -> R {
    let root = try makeTemporaryDirectory(prefix: "token-cache-client")
    defer { try? FileManager.default.removeItem(atPath: root) }
    try KeyFile.create(at: root + "/key")
    let configuration = Configuration(directory: root + "/store", keySource: .keyFile(path: root + "/key"))
    let client = try TokenClient(configuration: configuration, clock: clock)
    return try await body(client)
}

/// A new client of a new store with the user signed in at the clock's start, the endpoint that signed them in
/// (answering after `latency`, recommending a refresh after `refreshIn`), and the clock.
func withSignedInClient<R>(
    latency: Duration = .zero, refreshIn: Int64? = nil, _ body: (TokenClient, FakeTokenEndpoint, TestClock) async throws -> R
) async throws -> R {
    let clock = TestClock()
    let endpoint = FakeTokenEndpoint(clock: clock, latency: latency, refreshIn: refreshIn)
    return try await withClient(clock: clock) { client in
        try await client.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        return try await body(client, endpoint, clock)
    }
}
