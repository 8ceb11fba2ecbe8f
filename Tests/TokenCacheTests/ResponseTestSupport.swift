import Foundation
import Testing

@testable import TokenCache

/// Real-shaped token responses: AAD-like `client_info` and unsigned-signature-shaped id_tokens built in the test,
/// with fabricated GUIDs.
enum ResponseFixtures {
    static let clientID = "4b0db8c2-9f26-4417-8bde-3f0e3656f8e0"
    static let uid = "3a5c8f1e-2b7d-4c9a-8e6f-1d2c3b4a5968"
    static let utid = "c4f2a9e1-7b3d-4e8a-9c1f-2d6b8a4e7f10"
    static let guestTenant = "e8d7c6b5-a4f3-4e2d-8c1b-0a9f8e7d6c5b"
    /// The well-known MSA consumers tenant id.
    static let consumersTenant = "9188040d-6c67-4c5b-b112-36a304b66dad"
    static let msaUID = "00000000-0000-0000-66f3-3332eca7ea81"
    static let now: Int64 = 1_795_353_806

    static func base64URL(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func base64URL(_ text: String) -> String { base64URL(Array(text.utf8)) }

    static func clientInfo(uid: String = uid, utid: String = utid) -> String {
        base64URL(JSONValue.object(["uid": .string(uid), "utid": .string(utid)]).description)
    }

    /// The claims AAD v2.0 puts in an id_token for a work or school account.
    static func aadClaims(
        tid: String = utid, oid: String = uid, sub: String = "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
        preferredUsername: String? = "adele.vance@contoso.example", name: String = "Adele Vance"
    ) -> [String: JSONValue] {
        var claims: [String: JSONValue] = [
            "aud": .string(clientID),
            "iss": .string("https://login.microsoftonline.com/\(tid)/v2.0"),
            "iat": .integer(now - 5), "nbf": .integer(now - 5), "exp": .integer(now + 3595),
            "name": .string(name), "oid": .string(oid), "sub": .string(sub), "tid": .string(tid),
            "ver": .string("2.0"), "aio": .string("AWQAm/8TAAAA"), "uti": .string("Zx8bXh3ZkUuJm4vK1QAAAA"),
        ]
        if let preferredUsername { claims["preferred_username"] = .string(preferredUsername) }
        return claims
    }

    /// An RS256-shaped JWT: header, payload, and a fake (never checked) signature unless `signature` is given.
    static func idToken(_ claims: [String: JSONValue], signature: String = "c2lnbmF0dXJlLW5vdC1jaGVja2Vk") -> String {
        let header = JSONValue.object(["alg": .string("RS256"), "kid": .string("kg2LYs2T0CTjIfj4rt6JIynen38"), "typ": .string("JWT")])
        return base64URL(header.description) + "." + base64URL(JSONValue.object(claims).description) + "." + signature
    }

    /// A complete AAD v2.0 user response, as the token endpoint sends it for an authorization-code redemption.
    static func aadMembers(
        claims: [String: JSONValue] = aadClaims(), clientInfo: String = clientInfo(), foci: String? = "1"
    ) -> [String: JSONValue] {
        var members: [String: JSONValue] = [
            "token_type": .string("Bearer"),
            "scope": .string("User.Read Mail.Read openid profile offline_access"),
            "expires_in": .integer(4479), "ext_expires_in": .integer(4479 + 3600), "refresh_in": .integer(2239),
            "access_token": .string("eyJ0eXAiOiJKV1QiLCJub25jZSI6.at-payload.at-signature"),
            "refresh_token": .string("0.AXEA-refresh-token-material"),
            "id_token": .string(idToken(claims)),
            "client_info": .string(clientInfo),
        ]
        if let foci { members["foci"] = .string(foci) }
        return members
    }

    static func json(_ members: [String: JSONValue]) -> [UInt8] { Array(JSONValue.object(members).description.utf8) }

    static func response(_ members: [String: JSONValue]) throws -> TokenResponse {
        try TokenResponse(json: json(members))
    }

    static func context(
        _ authority: String = "https://login.microsoftonline.com/\(utid)/", scopes: [String] = ["User.Read", "Mail.Read"],
        grantType: String? = "authorization_code", now: Int64 = now
    ) throws -> TokenRequestContext {
        TokenRequestContext(
            clientID: clientID, authority: try Authority(authority), requestedScopes: scopes, grantType: grantType, now: now
        )
    }

    static func derive(_ members: [String: JSONValue], _ context: TokenRequestContext) throws -> DerivedEntities {
        try DerivedEntities(response: try response(members), context: context)
    }

    /// The `.invalidArgument` error `body` throws (the test fails otherwise).
    static func invalidArgument(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) -> TokenCacheError? {
        let error = #expect(throws: TokenCacheError.self, sourceLocation: sourceLocation) { try body() }
        #expect(error?.code == .invalidArgument, sourceLocation: sourceLocation)
        return error
    }
}
