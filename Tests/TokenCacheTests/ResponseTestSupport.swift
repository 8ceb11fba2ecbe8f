import Foundation
import TestSupport
import Testing

@testable import TokenCache

/// Real-shaped token responses as `JSONValue` members, which the parsing and derivation tests change one at a time:
/// a work account's (fabricated GUIDs) by default, built by TestSupport's `Responses`.
enum ResponseFixtures {
    static let clientID = "4b0db8c2-9f26-4417-8bde-3f0e3656f8e0"
    static let uid = "3a5c8f1e-2b7d-4c9a-8e6f-1d2c3b4a5968"
    static let utid = "c4f2a9e1-7b3d-4e8a-9c1f-2d6b8a4e7f10"
    static let guestTenant = "e8d7c6b5-a4f3-4e2d-8c1b-0a9f8e7d6c5b"
    static let now = ReferenceTime.now

    static func clientInfo(uid: String = uid, utid: String = utid) -> String {
        Responses.clientInfo(uid: uid, utid: utid)
    }

    /// The claims AAD v2.0 puts in an id_token for a work or school account.
    static func aadClaims(
        tid: String = utid, oid: String = uid, sub: String = "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ",
        preferredUsername: String? = User.username, name: String = User.name
    ) -> [String: JSONValue] {
        members(Responses.claims(tid: tid, oid: oid, sub: sub, username: preferredUsername, name: name, audience: clientID))
    }

    /// An RS256-shaped JWT: header, payload, and a fake (never checked) signature unless `signature` is given.
    static func idToken(_ claims: [String: JSONValue], signature: String = "c2lnbmF0dXJlLW5vdC1jaGVja2Vk") -> String {
        Responses.idToken(claimsJSON: JSONValue.object(claims).description, signature: signature)
    }

    /// A complete AAD v2.0 user response, as the token endpoint sends it for an authorization-code redemption.
    static func aadMembers(
        claims: [String: JSONValue] = aadClaims(), clientInfo: String = clientInfo(), foci: String? = "1"
    ) -> [String: JSONValue] {
        members(
            Responses.members(
                accessToken: "eyJ0eXAiOiJKV1QiLCJub25jZSI6.at-payload.at-signature", scope: "User.Read Mail.Read openid profile offline_access",
                expiresIn: 4479, extExpiresIn: 4479 + 3600, refreshToken: "0.AXEA-refresh-token-material", idToken: idToken(claims),
                clientInfo: clientInfo, foci: foci, refreshIn: 2239
            ))
    }

    /// TestSupport's members as the library's JSON values.
    static func members(_ members: [String: Any]) -> [String: JSONValue] {
        members.mapValues(value)
    }

    static func value(_ value: Any) -> JSONValue {
        switch value {
        case let text as String: .string(text)
        case let number as Int: .integer(Int64(number))
        case let number as Int64: .integer(number)
        case let array as [Any]: .array(array.map(Self.value))
        case let object as [String: Any]: .object(members(object))
        default: preconditionFailure("no JSON value: \(value)")
        }
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
