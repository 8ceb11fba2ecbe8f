import Foundation

@testable import TokenCache

/// Real-shaped token responses: base64url client_info and unsigned id_tokens with AAD's claims.
enum Responses {
    static let uid = "00000000-0000-0000-66f3-3332eca7ea81"
    static let utid = "9188040d-6c67-4c5b-b112-36a304b66dad"
    static var home: String { "\(uid).\(utid)" }
    static let client = "04f0c124-f2bc-4f59-8241-bf6df9866bbd"
    static let familyMember = "d3590ed6-52b3-4102-aeff-aad2292ab01c"
    static let cloud = "login.microsoftonline.com"

    static func clientInfo(uid: String = uid, utid: String = utid) -> String {
        ResponseFixtures.clientInfo(uid: uid, utid: utid)
    }

    /// AAD-shaped claims (see ``ResponseFixtures/aadClaims``), for this suite's client.
    static func idToken(tid: String = utid, oid: String = uid, username: String = "user@contoso.example", sub: String = "sub-1") -> String {
        var claims = ResponseFixtures.aadClaims(tid: tid, oid: oid, sub: sub, preferredUsername: username, name: "A User")
        claims["aud"] = .string(client)
        return ResponseFixtures.idToken(claims)
    }

    /// A token-endpoint response as JSON bytes.
    static func json(
        accessToken: String = "at-1", scope: String? = "User.Read openid profile offline_access", expiresIn: Int = 3600,
        refreshToken: String? = "rt-1", idToken: String? = Responses.idToken(), clientInfo: String? = Responses.clientInfo(),
        foci: String? = nil, refreshIn: Int? = nil, tokenType: String = "Bearer"
    ) -> Data {
        var object: [String: Any] = ["access_token": accessToken, "token_type": tokenType, "expires_in": expiresIn, "ext_expires_in": expiresIn]
        if let scope { object["scope"] = scope }
        if let refreshToken { object["refresh_token"] = refreshToken }
        if let idToken { object["id_token"] = idToken }
        if let clientInfo { object["client_info"] = clientInfo }
        if let foci { object["foci"] = foci }
        if let refreshIn { object["refresh_in"] = refreshIn }
        return try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    }

    static func context(
        client: String = client, authority: String = "https://login.microsoftonline.com/common", scopes: [String] = ["User.Read"],
        grantType: String = "authorization_code", now: Int64 = Samples.now
    ) throws -> TokenRequestContext {
        TokenRequestContext(clientID: client, authority: try Authority(authority), requestedScopes: scopes, grantType: grantType, now: now)
    }

    static func query(
        client: String = client, home: String = home, environment: String = cloud, realm: String = utid,
        scopes: [String] = ["User.Read"], now: Int64 = Samples.now
    ) -> SilentLookupQuery {
        SilentLookupQuery(clientID: client, homeAccountID: home, environment: environment, realm: realm, scopes: scopes, now: now)
    }
}
