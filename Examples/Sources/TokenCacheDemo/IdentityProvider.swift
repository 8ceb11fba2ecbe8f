import Foundation
import TokenCacheClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The app's side of the identity provider: the two token-endpoint calls a public client makes. This is the part
/// the library leaves to the app (it does no HTTP).
struct IdentityProvider: Sendable {
    let endpoint: URL
    let clientID: String

    /// An interactive sign-in, reduced to its last step: the authorization code redeemed (a real app gets the code
    /// from a browser redirect or uses the device-code flow).
    func signIn(scopes: [String]) async throws -> TokenResponse {
        let (status, body) = try await post("token", ["grant_type": "authorization_code", "code": "demo", "client_id": clientID, "scope": scopes.joined(separator: " ")])
        guard status == 200 else { throw DemoError("sign-in failed with HTTP \(status)") }
        return try TokenResponse(json: body)
    }

    /// `grant_type=refresh_token`. A refused refresh token (`invalid_grant` with no `suberror` or claims challenge: it
    /// expired, was revoked or was redeemed already) means the user must sign in again; this provider asks for no other
    /// interaction.
    func redeem(_ refreshToken: Secret, scopes: [String]) async throws -> TokenResponse {
        let (status, body) = try await post(
            "token", ["grant_type": "refresh_token", "refresh_token": refreshToken.reveal(), "client_id": clientID, "scope": scopes.joined(separator: " ")]
        )
        if status == 400, let error = try? JSONSerialization.jsonObject(with: body) as? [String: Any], error["error"] as? String == "invalid_grant" {
            if error["suberror"] == nil, error["claims"] == nil { throw TokenClientError.refreshTokenRefused() }
            throw TokenClientError.interactionRequired()
        }
        guard status == 200 else { throw DemoError("the token endpoint answered HTTP \(status)") }
        return try TokenResponse(json: body)
    }

    /// What the fake provider counted (not part of a real provider).
    func stats() async throws -> [String: Int] {
        let (data, _) = try await URLSession.shared.data(from: endpoint.appendingPathComponent("stats"))
        // Its counts; the per-user breakdown beside them is not needed here.
        return ((try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]).compactMapValues { $0 as? Int }
    }

    /// Makes the fake provider refuse every refresh token issued so far (not part of a real provider).
    func revokeEverything() async throws { _ = try await post("revoke", [:]) }

    private func post(_ path: String, _ form: [String: String]) async throws -> (Int, Data) {
        var request = URLRequest(url: endpoint.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        request.httpBody = form.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
            .joined(separator: "&").data(using: .utf8)
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
