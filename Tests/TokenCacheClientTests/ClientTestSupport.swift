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
/// as with a strict rotating server), and counts what it was asked. One that holds its answers stands for a slow
/// endpoint: each redemption waits until the test calls ``answer()``, so that a test orders callers by what they do,
/// not by how long it sleeps.
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
    let refreshIn: Int64?
    /// Open once a redemption has begun.
    let redemptionBegan = Latch()
    /// Open once redemptions may answer.
    private let answers = Latch()

    init(clock: TestClock, holdingAnswers: Bool = false, refreshIn: Int64? = nil) {
        self.clock = clock
        self.refreshIn = refreshIn
        if !holdingAnswers { answers.open() }
    }

    /// Lets the held redemptions, and every later one, answer.
    func answer() { answers.open() }

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
        redemptionBegan.open()
        await answers.wait()
        // As an HTTP client does: a cancelled refresh fails instead of storing what came back.
        try Task.checkCancellation()
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

    /// Makes a refresh token issued elsewhere (an on-behalf-of exchange, say) one this endpoint redeems.
    func accept(_ refreshToken: String) { _ = state.withLock { $0.valid.insert(refreshToken) } }

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
/// (holding its answers if asked, recommending a refresh after `refreshIn`), and the clock.
func withSignedInClient<R>(
    holdingAnswers: Bool = false, refreshIn: Int64? = nil, _ body: (TokenClient, FakeTokenEndpoint, TestClock) async throws -> R
) async throws -> R {
    let clock = TestClock()
    let endpoint = FakeTokenEndpoint(clock: clock, holdingAnswers: holdingAnswers, refreshIn: refreshIn)
    return try await withClient(clock: clock) { client in
        try await client.ingest(endpoint.signIn(), clientID: User.client, authority: User.authority, scopes: ["User.Read"])
        return try await body(client, endpoint, clock)
    }
}

/// A gate that opens once and stays open: what one task waits for until another says so.
final class Latch: Sendable {
    private let state = Mutex<(isOpen: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiting = state.withLock { state in
            state.isOpen = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state in
                if !state.isOpen { state.waiting.append(continuation) }
                return state.isOpen
            }
            if isOpen { continuation.resume() }
        }
    }
}

/// How long a wait for a state may last before the test fails: a bound for a hang, not a window any run comes near.
/// In a full run, long synchronous tests can hold every thread of the pool, and so a waiter, for minutes.
let hangBound = Duration.seconds(600)

struct StateNotReached: Error, CustomStringConvertible {
    let description: String
}

/// Waits until `condition` holds, looking every millisecond; throws if it does not within ``hangBound``.
func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + hangBound
    while !condition() {
        guard ContinuousClock.now < deadline else { throw StateNotReached(description: "not reached within \(hangBound): \(what)") }
        try await Task.sleep(for: .milliseconds(1))
    }
}
