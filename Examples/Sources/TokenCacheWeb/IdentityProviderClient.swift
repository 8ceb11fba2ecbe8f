import Foundation
import TokenCacheClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The host's side of the identity provider: the two token-endpoint calls (the library does no HTTP). Every call is
/// bounded by ``timeout``; a provider that does not answer, or answers with a server error, is
/// ``IdentityProviderUnavailable``, a refused refresh token the client's `refreshTokenRefused`.
struct IdentityProviderClient: Sendable {
    let endpoint: URL
    let clientID: String
    /// Sent as `X-Client-Host` and `X-Client-Pid`: which of several hosts on one address is redeeming (the fake
    /// provider shows them in its list of redemptions in progress).
    let hostName: String
    /// The bound of one call; the client's refresh lease lasts longer.
    static let timeout: TimeInterval = 10

    private let session: URLSession

    init(endpoint: URL, clientID: String, hostName: String) {
        self.endpoint = endpoint
        self.clientID = clientID
        self.hostName = hostName
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.timeout
        configuration.timeoutIntervalForResource = Self.timeout
        configuration.httpMaximumConnectionsPerHost = 32
        configuration.connectionProxyDictionary = [:]
        session = URLSession(configuration: configuration)
    }

    /// The authorization-code grant of a sign-in (a real web app gets the code from the browser's redirect).
    func signIn(code: String, scopes: [String]) async throws -> TokenResponse {
        let (status, body) = try await post(["grant_type": "authorization_code", "code": code, "client_id": clientID, "scope": scopes.joined(separator: " ")])
        if status == 400 { throw TokenClientError.interactionRequired("the token endpoint refused the authorization code") }
        guard status == 200 else { throw IdentityProviderUnavailable() }
        return try TokenResponse(json: body)
    }

    /// `grant_type=refresh_token`: the client's refresh closure. `invalid_grant` with no `suberror` or claims
    /// challenge (expired, revoked or redeemed already) means the user must sign in again.
    func redeem(_ refreshToken: Secret, scopes: [String]) async throws -> TokenResponse {
        let (status, body) = try await post(
            ["grant_type": "refresh_token", "refresh_token": refreshToken.reveal(), "client_id": clientID, "scope": scopes.joined(separator: " ")]
        )
        if status == 400, let error = try? JSONSerialization.jsonObject(with: body) as? [String: Any], error["error"] as? String == "invalid_grant" {
            if error["suberror"] == nil, error["claims"] == nil { throw TokenClientError.refreshTokenRefused() }
            throw TokenClientError.interactionRequired()
        }
        guard status == 200 else { throw IdentityProviderUnavailable() }
        return try TokenResponse(json: body)
    }

    private func post(_ form: [String: String]) async throws -> (Int, Data) {
        var request = URLRequest(url: endpoint.appendingPathComponent("token"), timeoutInterval: Self.timeout)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue(hostName, forHTTPHeaderField: "X-Client-Host")
        request.setValue(String(ProcessInfo.processInfo.processIdentifier), forHTTPHeaderField: "X-Client-Pid")
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        request.httpBody = form.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
            .joined(separator: "&").data(using: .utf8)
        do {
            let (data, response) = try await session.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // A URLError's description names the URL, not a token; it is dropped all the same: the kind is enough.
            throw IdentityProviderUnavailable()
        }
    }
}

/// The identity provider did not answer in time, refused the connection or answered with a server error.
struct IdentityProviderUnavailable: Error, CustomStringConvertible {
    var description: String { "the identity provider is unavailable" }
}
