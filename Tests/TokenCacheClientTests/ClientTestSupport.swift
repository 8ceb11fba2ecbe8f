import Foundation
import Synchronization
import TokenCache
import TokenCacheClient

/// A clock the test moves.
final class TestClock: WallClock {
    private let time: Atomic<Int64>
    init(_ start: Int64 = 1_795_353_806) { time = Atomic(start) }
    func now() -> Int64 { time.load(ordering: .relaxed) }
    func advance(by seconds: Int64) { time.wrappingAdd(seconds, ordering: .relaxed) }
}

/// Names and claims of the one user most tests sign in.
enum User {
    static let uid = "00000000-0000-0000-66f3-3332eca7ea81"
    static let utid = "9188040d-6c67-4c5b-b112-36a304b66dad"
    static var home: String { "\(uid).\(utid)" }
    static let username = "adele.vance@contoso.example"
    static let client = "04f0c124-f2bc-4f59-8241-bf6df9866bbd"
    static let authority = try! Authority("https://login.microsoftonline.com/common")

    static func request(scopes: [String] = ["User.Read"], forceRefresh: Bool = false, home: String = home) -> TokenRequest {
        TokenRequest(clientID: client, homeAccountID: home, authority: authority, scopes: scopes, forceRefresh: forceRefresh)
    }
}

/// Token-endpoint responses shaped like AAD's: base64url client_info and an unsigned id_token.
enum Responses {
    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func clientInfo(uid: String = User.uid, utid: String = User.utid) -> String {
        base64URL(JSONValue.object(["uid": .string(uid), "utid": .string(utid)]).description)
    }

    static func idToken(uid: String = User.uid, utid: String = User.utid, username: String = User.username, name: String = "Adele Vance", issuedAt: Int64) -> Secret {
        let claims: [String: JSONValue] = [
            "aud": .string(User.client), "iss": .string("https://login.microsoftonline.com/\(utid)/v2.0"), "iat": .integer(issuedAt),
            "exp": .integer(issuedAt + 3600), "name": .string(name), "oid": .string(uid), "sub": .string("sub-\(uid)"),
            "tid": .string(utid), "preferred_username": .string(username), "ver": .string("2.0"), "groups": .array([.string("g1")]),
        ]
        let header = JSONValue.object(["alg": .string("RS256"), "typ": .string("JWT")])
        return Secret(base64URL(header.description) + "." + base64URL(JSONValue.object(claims).description) + ".c2ln")
    }

    static func response(
        accessToken: String, refreshToken: String?, expiresIn: Int64 = 3600, refreshIn: Int64? = nil, scope: String = "User.Read openid profile offline_access",
        uid: String = User.uid, utid: String = User.utid, username: String = User.username, issuedAt: Int64
    ) -> TokenResponse {
        TokenResponse(
            accessToken: Secret(accessToken), expiresIn: expiresIn, refreshIn: refreshIn, refreshToken: refreshToken.map(Secret.init),
            idToken: idToken(uid: uid, utid: utid, username: username, issuedAt: issuedAt), clientInfo: clientInfo(uid: uid, utid: utid),
            scope: scope
        )
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
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("token-cache-client-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: root) }
    try KeyFile.create(at: root + "/key")
    let configuration = Configuration(directory: root + "/store", keySource: .keyFile(path: root + "/key"))
    let client = try TokenClient(configuration: configuration, clock: clock)
    return try await body(client)
}

extension Responses {
    /// A token-endpoint response as the JSON bytes an HTTP client receives.
    static func json(accessToken: String, refreshToken: String, issuedAt: Int64, username: String = User.username) -> Data {
        let object: [String: Any] = [
            "token_type": "Bearer", "scope": "User.Read openid profile offline_access", "expires_in": 3600,
            "access_token": accessToken, "refresh_token": refreshToken, "client_info": clientInfo(),
            "id_token": idToken(username: username, issuedAt: issuedAt).reveal(),
        ]
        return try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }
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
