import Crypto
import Foundation
import Hummingbird
import TokenCacheClient

/// The host's HTTP API: sign a user in, get a user's access token, sign a user out, and report what it did. Users
/// are numbers (`user=N`), standing in for a session; no answer carries a token or a username, only a token's
/// fingerprint.
struct FarmRoutes: Sendable {
    let name: String
    let client: TokenClient
    let identityProvider: IdentityProviderClient
    let users: UserDirectory
    let statistics: HostStatistics
    let authority: Authority
    static let defaultScope = "api://farm/read"

    func register(on router: Router<BasicRequestContext>) {
        router.get("/health") { _, _ in Self.json(200, ["ok": true]) }
        router.get("/stats") { _, _ in Self.json(200, statistics.json(name: name, client: client.statistics)) }
        router.post("/sign-in") { request, _ in await signIn(request) }
        router.get("/token") { request, _ in await token(request) }
        router.post("/sign-out") { request, _ in await signOut(request) }
    }

    /// `POST /sign-in?user=N`: the authorization-code grant of user N's sign-in, stored durably before the answer.
    func signIn(_ request: Request) async -> Response {
        let started = ContinuousClock.now
        guard let user = Self.user(request) else { return Self.json(400, ["error": "bad_request"]) }
        let scopes = [Self.scope(request)]
        do {
            let response = try await identityProvider.signIn(code: "user-\(user)", scopes: scopes)
            let ingested = try await client.ingest(response, clientID: users.clientID, authority: authority, scopes: scopes)
            users.remember(user, homeAccountID: ingested.homeAccountID)
            statistics.signIn()
            return Self.json(200, ["user": user, "ms": Self.milliseconds(since: started)])
        } catch {
            return failure(error, since: started)
        }
    }

    /// `GET /token?user=N[&scope=S]`: the silent flow, with where its answer came from.
    func token(_ request: Request) async -> Response {
        let started = ContinuousClock.now
        guard let user = Self.user(request) else { return Self.json(400, ["error": "bad_request"]) }
        statistics.request()
        let trace = TokenSourceTrace()
        do {
            guard let homeAccountID = try await users.homeAccountID(of: user, in: client) else {
                throw TokenClientError.interactionRequired("no account of this user is signed in")
            }
            let tokenRequest = TokenRequest(clientID: users.clientID, homeAccountID: homeAccountID, authority: authority, scopes: [Self.scope(request)])
            let result = try await TokenSourceTrace.$current.withValue(trace) { try await client.token(for: tokenRequest) }
            let source = trace.source(of: result)
            statistics.answered(from: source)
            return Self.json(200, [
                "source": source.rawValue, "fingerprint": Self.fingerprint(result.value), "expires_on": result.expiresOn,
                "ms": Self.milliseconds(since: started),
            ])
        } catch {
            return failure(error, since: started)
        }
    }

    /// `POST /sign-out?user=N`: removes user N's account (every client's tokens), durably before the answer.
    func signOut(_ request: Request) async -> Response {
        let started = ContinuousClock.now
        guard let user = Self.user(request) else { return Self.json(400, ["error": "bad_request"]) }
        do {
            var removed = false
            if let homeAccountID = try await users.homeAccountID(of: user, in: client) {
                removed = try await client.signOut(homeAccountID: homeAccountID, clientID: nil).total > 0
            }
            statistics.signOut()
            return Self.json(200, ["user": user, "removed": removed, "ms": Self.milliseconds(since: started)])
        } catch {
            return failure(error, since: started)
        }
    }

    private func failure(_ error: any Error, since started: ContinuousClock.Instant) -> Response {
        let kind = ErrorKind(error)
        statistics.failed(kind.kind)
        return Self.json(kind.status, ["error": kind.kind, "ms": Self.milliseconds(since: started)])
    }

    /// The `user` query parameter: a non-negative integer.
    private static func user(_ request: Request) -> Int? {
        guard let text = request.uri.queryParameters["user"], let user = Int(text), user >= 0 else { return nil }
        return user
    }

    private static func scope(_ request: Request) -> String {
        request.uri.queryParameters["scope"].map(String.init) ?? defaultScope
    }

    /// The first 16 hex digits of the token's SHA-256: what the identity provider lists for the tokens it issued.
    static func fingerprint(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    private static func milliseconds(since started: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - started
        let microseconds = elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000
        return Double(microseconds) / 1000
    }

    private static func json(_ status: Int, _ body: [String: Any]) -> Response {
        let data = (try? JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])) ?? Data("{}".utf8)
        return Response(
            status: HTTPResponse.Status(code: status), headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}
