import TestSupport
import Testing

@testable import TokenCache

/// Malformed responses full of canaries: the rejection must say what is wrong without repeating any of them.
@Suite struct ResponseCanaryTests {
    typealias F = ResponseFixtures

    static let canaryClaims: [String: JSONValue] = [
        "sub": .string(Canary.homeAccountID), "oid": .string(Canary.homeAccountID), "tid": .string(Canary.realm),
        "preferred_username": .string(Canary.username), "name": .string(Canary.username),
    ]
    static let canaryClientInfo = base64URL(JSONValue.object(["uid": .string(Canary.homeAccountID), "utid": .string(Canary.realm)]).description)

    static func members(_ changes: [String: JSONValue]) -> [String: JSONValue] {
        var members: [String: JSONValue] = [
            "access_token": .string(Canary.secret), "refresh_token": .string(Canary.secret), "expires_in": .integer(3600),
            "id_token": .string(F.idToken(canaryClaims, signature: base64URL(Canary.secret))),
            "client_info": .string(canaryClientInfo), "scope": .string(Canary.scope),
        ]
        for (name, value) in changes { members[name] = value }
        return members
    }

    static let cases: [(String, [UInt8])] = [
        ("negative expires_in", F.json(members(["expires_in": .integer(-1)]))),
        ("expires_in holding the token", F.json(members(["expires_in": .string(Canary.secret)]))),
        ("expires_in holding the username", F.json(members(["expires_in": .string(Canary.username)]))),
        ("refresh_in not an integer", F.json(members(["refresh_in": .double(1.5)]))),
        ("refresh_token of the wrong type", F.json(members(["refresh_token": .array([.string(Canary.secret)])]))),
        ("error response quoting the user", F.json(members([
            "error": .string("invalid_grant"),
            "error_description": .string("AADSTS50126: bad password for \(Canary.username) token \(Canary.secret)"),
        ]))),
        ("error code that is the token", F.json(members(["error": .string(Canary.secret)]))),
        ("error code that is the username", F.json(members(["error": .string(Canary.username)]))),
        ("truncated JSON", Array(F.json(members([:])).dropLast(3))),
        ("garbage after the object", F.json(members([:])) + Array(" \(Canary.secret)".utf8)),
        ("duplicate access_token", Array(#"{"access_token":"\#(Canary.secret)","access_token":"\#(Canary.username)","expires_in":1}"#.utf8)),
        ("bad escape after the token", Array(#"{"access_token":"\#(Canary.secret)\x","expires_in":1}"#.utf8)),
        ("JSON array of canaries", Array(#"["\#(Canary.secret)","\#(Canary.username)"]"#.utf8)),
        ("oversized", Array(#"{"access_token":"\#(Canary.secret)","x":""#.utf8) + [UInt8](repeating: 0x41, count: 1 << 20) + Array(#""}"#.utf8)),
    ]

    static let derivationCases: [(String, [String: JSONValue])] = [
        ("client_info without utid", members(["client_info": .string(base64URL(#"{"uid":"\#(Canary.homeAccountID)"}"#))])),
        ("client_info not base64", members(["client_info": .string(Canary.username)])),
        ("id_token of two segments", members(["id_token": .string(base64URL(Canary.username) + "." + base64URL(Canary.secret))])),
        ("id_token with a non-JSON payload", members(["id_token": .string("eyJhbGciOiJub25lIn0.\(base64URL(Canary.username)).")])),
        ("id_token that is the access token", members(["id_token": .string(Canary.secret)])),
        ("scope with a bad character", members(["scope": .string("\(Canary.scope) \(Canary.username)\"")])),
        ("id_token without sub, no client_info", members(["client_info": .null, "id_token": .string(F.idToken(["preferred_username": .string(Canary.username)]))])),
    ]

    func expectNoCanary(_ error: TokenCacheError?, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let error else { Issue.record("\(label): no error", sourceLocation: sourceLocation); return }
        for text in [error.message, error.description, String(describing: error), String(reflecting: error)] {
            for canary in Canary.all where text.contains(canary) {
                Issue.record("\(label): the error leaks a canary", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func parsingErrorsCarryNoCanary() {
        for (label, bytes) in Self.cases {
            let error = F.invalidArgument { _ = try TokenResponse(json: bytes) }
            expectNoCanary(error, label)
        }
    }

    @Test func derivationErrorsCarryNoCanary() throws {
        for (label, members) in Self.derivationCases {
            let context = TokenRequestContext(
                clientID: Canary.clientID, authority: try Authority("https://login.microsoftonline.com/organizations"),
                requestedScopes: [Canary.scope], grantType: "authorization_code", now: F.now
            )
            let error = F.invalidArgument { _ = try DerivedEntities(response: try F.response(members), context: context) }
            expectNoCanary(error, label)
        }
    }

    @Test func theCanaryCasesAreRealRejections() throws {
        // Guards the test above: the same response without the defect is accepted, so each case fails for its defect.
        let context = TokenRequestContext(
            clientID: Canary.clientID, authority: try Authority("https://login.microsoftonline.com/organizations"),
            requestedScopes: [Canary.scope], grantType: "authorization_code", now: F.now
        )
        let derived = try DerivedEntities(response: try F.response(Self.members([:])), context: context)
        #expect(derived.account?.username == Canary.username)
        #expect(derived.accessToken.realm == Canary.realm)
    }

    @Test func authorityErrorsDoNotEchoTheURL() {
        for url in ["http://\(Canary.realm).example/\(Canary.realm)", "https://\(Canary.realm).example/?u=\(Canary.username)"] {
            let error = F.invalidArgument { _ = try Authority(url) }
            expectNoCanary(error, "authority")
        }
    }
}
