/// Token-endpoint responses shaped like Microsoft Entra ID's v2.0 ones, as JSON text: base64url `client_info`, an
/// RS256-shaped ID token with a fake signature. A test of the library feeds them to `TokenResponse(json:)`, a test of
/// cachetool to `cachetool ingest`: the same bytes a real endpoint's HTTP body would give them.
public enum Responses {
    /// The header of the ID tokens Microsoft Entra ID signs (a fabricated key id).
    public static let idTokenHeader = #"{"alg":"RS256","kid":"kg2LYs2T0CTjIfj4rt6JIynen38","typ":"JWT"}"#

    public static func clientInfo(uid: String = User.uid, utid: String = User.utid) -> String {
        base64URL(jsonText(["uid": uid, "utid": utid]))
    }

    /// The claims the v2.0 endpoint puts in an ID token, issued at `issuedAt` for an hour.
    public static func claims(
        tid: String = User.utid, oid: String = User.uid, sub: String = "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
        username: String? = User.username, name: String = User.name, audience: String = User.client,
        issuedAt: Int64 = ReferenceTime.now - 5
    ) -> [String: Any] {
        var claims: [String: Any] = [
            "aud": audience, "iss": "https://login.microsoftonline.com/\(tid)/v2.0",
            "iat": issuedAt, "nbf": issuedAt, "exp": issuedAt + 3600,
            "name": name, "oid": oid, "sub": sub, "tid": tid,
            "ver": "2.0", "aio": "AWQAm/8TAAAA", "uti": "Zx8bXh3ZkUuJm4vK1QAAAA",
        ]
        if let username { claims["preferred_username"] = username }
        return claims
    }

    /// An ID token of `claimsJSON` (JSON text), signed with a signature nobody checks unless `signature` is given.
    public static func idToken(claimsJSON: String, signature: String = "c2lnbmF0dXJlLW5vdC1jaGVja2Vk") -> String {
        unsignedJWT(header: idTokenHeader, payload: claimsJSON, signature: signature)
    }

    /// An ID token of ``claims(tid:oid:sub:username:name:audience:issuedAt:)``.
    public static func idToken(
        tid: String = User.utid, oid: String = User.uid, username: String? = User.username, name: String = User.name,
        audience: String = User.client, issuedAt: Int64 = ReferenceTime.now - 5
    ) -> String {
        idToken(claimsJSON: jsonText(claims(tid: tid, oid: oid, username: username, name: name, audience: audience, issuedAt: issuedAt)))
    }

    /// A response body; a member given nil is left out, but for `ext_expires_in`, which is then `expires_in`.
    public static func json(
        accessToken: String = "at-1", scope: String? = "User.Read openid profile offline_access", expiresIn: Int = 3600,
        extExpiresIn: Int? = nil, refreshToken: String? = "rt-1", idToken: String? = Responses.idToken(), clientInfo: String? = Responses.clientInfo(),
        foci: String? = nil, refreshIn: Int? = nil, tokenType: String = "Bearer"
    ) -> String {
        jsonText(
            members(
                accessToken: accessToken, scope: scope, expiresIn: expiresIn, extExpiresIn: extExpiresIn, refreshToken: refreshToken, idToken: idToken,
                clientInfo: clientInfo, foci: foci, refreshIn: refreshIn, tokenType: tokenType
            ))
    }

    /// The members of ``json(accessToken:scope:expiresIn:extExpiresIn:refreshToken:idToken:clientInfo:foci:refreshIn:tokenType:)``'s
    /// body, for a test that changes them before it encodes them.
    public static func members(
        accessToken: String = "at-1", scope: String? = "User.Read openid profile offline_access", expiresIn: Int = 3600,
        extExpiresIn: Int? = nil, refreshToken: String? = "rt-1", idToken: String? = Responses.idToken(), clientInfo: String? = Responses.clientInfo(),
        foci: String? = nil, refreshIn: Int? = nil, tokenType: String = "Bearer"
    ) -> [String: Any] {
        var members: [String: Any] = ["access_token": accessToken, "token_type": tokenType, "expires_in": expiresIn, "ext_expires_in": extExpiresIn ?? expiresIn]
        if let scope { members["scope"] = scope }
        if let refreshToken { members["refresh_token"] = refreshToken }
        if let idToken { members["id_token"] = idToken }
        if let clientInfo { members["client_info"] = clientInfo }
        if let foci { members["foci"] = foci }
        if let refreshIn { members["refresh_in"] = refreshIn }
        return members
    }
}
