import Foundation
import TestSupport
import Testing

@testable import TokenCache

@Suite struct ResponseClaimsTests {
    typealias F = ResponseFixtures

    // MARK: client_info

    @Test func decodesClientInfo() throws {
        let info = try ClientInfo(base64URL: F.clientInfo())
        #expect(info.uid == F.uid)
        #expect(info.utid == F.utid)
        #expect(info.homeAccountID == "\(F.uid).\(F.utid)")
    }

    @Test func clientInfoPaddingIsOptional() throws {
        // 54 bytes of JSON: base64 needs "==" padding; both spellings decode.
        let json = #"{"uid":"u-1","utid":"t-2","extra":[1],"name":"x y"}  "#
        let unpadded = base64URL(json)
        #expect(unpadded.utf8.count % 4 != 0)
        let padded = unpadded + String(repeating: "=", count: (4 - unpadded.utf8.count % 4) % 4)
        for text in [unpadded, padded] {
            let info = try ClientInfo(base64URL: text)
            #expect(info.homeAccountID == "u-1.t-2")
        }
    }

    @Test func clientInfoUsesTheURLSafeAlphabet() throws {
        // "???>>>" and "~~~" encode to base64 with '+' and '/' in the standard alphabet, '-' and '_' in base64url.
        let json = #"{"uid":"???>>>","utid":"t~~~"}"#
        let encoded = base64URL(json)
        #expect(encoded == "eyJ1aWQiOiI_Pz8-Pj4iLCJ1dGlkIjoidH5-fiJ9")
        let info = try ClientInfo(base64URL: encoded)
        #expect(info.homeAccountID == "???>>>.t~~~")
        let standard = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        #expect(errorCode { try ClientInfo(base64URL: standard) } == .invalidArgument)
    }

    @Test(arguments: [
        "not base64!",
        "eyJ1aWQiOiJ1In0=====",  // too much padding
        "a",  // impossible length
        base64URL("not json"),
        base64URL(#"{"uid":"u"}"#),  // no utid
        base64URL(#"{"utid":"t"}"#),  // no uid
        base64URL(#"{"uid":"","utid":"t"}"#),
        base64URL(#"{"uid":1,"utid":"t"}"#),
        base64URL(#"{"uid":"u","utid":null}"#),
        base64URL(#"["u","t"]"#),
        base64URL(#"{"uid":"u","utid":"t","uid":"v"}"#),
        "",
    ])
    func rejectsBadClientInfo(text: String) {
        let error = F.invalidArgument { _ = try ClientInfo(base64URL: text) }
        #expect(error?.message == "client_info is not base64url JSON with uid and utid")
    }

    // MARK: id_token

    @Test func anIDTokenShowsEveryClaimOfItsPayload() throws {
        var claims = F.aadClaims()
        claims["groups"] = .array([.string("g-1"), .string("g-2")])
        claims["ratio"] = .double(0.5)
        claims["exp"] = .integer(1_800_000_000)
        claims["address"] = .object(["country": .string("FR")])
        claims["verified"] = .bool(true)
        claims["nothing"] = .null
        let token = IDToken(
            homeAccountID: "\(F.uid).\(F.utid)", environment: "login.microsoftonline.com", clientID: "c", realm: F.utid,
            secret: Secret(F.idToken(claims)))
        // Exactly the payload, with integers as integers and fractions as doubles.
        #expect(token.claims == claims)
        #expect(token.claims?["preferred_username"] == .string("adele.vance@contoso.example"))
        for notAJWT in ["", "abc", "a.b", "e30.e30.e30.e30", "eyJhbGciOiJub25lIn0.WzFd."] {
            #expect(IDToken(homeAccountID: "h", environment: "e", clientID: "c", realm: "r", secret: Secret(notAJWT)).claims == nil, "\(notAJWT)")
        }
    }

    @Test func decodesAADClaims() throws {
        var claims = F.aadClaims()
        claims["upn"] = .string("adele@contoso.example")
        claims["email"] = .string("adele.mail@contoso.example")
        claims["given_name"] = .string("Adele")
        claims["family_name"] = .string("Vance")
        claims["middle_name"] = .string("Q")
        let decoded = try IDTokenClaims(jwt: Secret(F.idToken(claims)))
        #expect(decoded.sub == "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ")
        #expect(decoded.oid == F.uid)
        #expect(decoded.tid == F.utid)
        #expect(decoded.preferredUsername == "adele.vance@contoso.example")
        #expect(decoded.upn == "adele@contoso.example")
        #expect(decoded.email == "adele.mail@contoso.example")
        #expect(decoded.name == "Adele Vance")
        #expect(decoded.givenName == "Adele")
        #expect(decoded.familyName == "Vance")
        #expect(decoded.middleName == "Q")
        #expect(decoded.username == "adele.vance@contoso.example")
        #expect(decoded.localAccountID == F.uid)
    }

    @Test func usernameAndLocalIDFallBack() throws {
        let upnOnly = try IDTokenClaims(jwt: Secret(F.idToken(["sub": .string("s"), "upn": .string("u@x"), "email": .string("e@x")])))
        #expect(upnOnly.username == "u@x")
        #expect(upnOnly.localAccountID == "s")
        let emailOnly = try IDTokenClaims(jwt: Secret(F.idToken(["email": .string("e@x"), "preferred_username": .string("")])))
        #expect(emailOnly.username == "e@x")
        #expect(emailOnly.localAccountID == nil)
    }

    @Test func claimsOfTheWrongTypeAreAbsent() throws {
        let claims: [String: JSONValue] = [
            "sub": .integer(5), "oid": .null, "tid": .array([.string("t")]), "preferred_username": .bool(true),
            "upn": .object(["a": .string("b")]), "email": .double(1.5), "name": .string("Kept"),
        ]
        let decoded = try IDTokenClaims(jwt: Secret(F.idToken(claims)))
        #expect(decoded.sub == nil && decoded.oid == nil && decoded.tid == nil)
        #expect(decoded.preferredUsername == nil && decoded.upn == nil && decoded.email == nil)
        #expect(decoded.name == "Kept")
    }

    @Test func acceptsAnUnsignedTokenWithAnEmptySignature() throws {
        let header = base64URL(#"{"alg":"none","typ":"JWT"}"#)
        let decoded = try IDTokenClaims(jwt: Secret(header + "." + base64URL(#"{"sub":"s-1","name":"Ren\u00e9"}"#) + "."))
        #expect(decoded.sub == "s-1")
        #expect(decoded.name == "René")
    }

    @Test func acceptsAPaddedPayload() throws {
        let payload = base64URL(#"{"sub":"s"}"#)
        let padded = payload + String(repeating: "=", count: (4 - payload.utf8.count % 4) % 4)
        #expect(padded != payload)
        #expect(try IDTokenClaims(jwt: Secret("eyJhbGciOiJub25lIn0.\(padded).")).sub == "s")
    }

    @Test(arguments: [
        ("eyJhbGciOiJub25lIn0.eyJzdWIiOiJzIn0", "three dot-separated segments"),  // 2 segments
        ("eyJhbGciOiJub25lIn0", "three dot-separated segments"),
        ("a.b.c.d.e", "three dot-separated segments"),  // JWE compact form
        ("", "three dot-separated segments"),
        (".eyJzdWIiOiJzIn0.", "header is not base64url"),
        ("eyJhbGciOiJub25lIn0..sig", "payload is not base64url"),
        ("eyJhbGciOiJub25lIn0.eyJzdWIiOi*zIn0.sig", "payload is not base64url"),
        ("eyJhbGciOiJub25lIn0.eyJzdWIiOiJzIn0.s+g/", "signature is not base64url"),
        ("eyJhbGciOiJub25lIn0.\(base64URL("not json")).sig", "payload is not a JSON object"),
        ("eyJhbGciOiJub25lIn0.\(base64URL("[1,2]")).sig", "payload is not a JSON object"),
        ("eyJhbGciOiJub25lIn0.\(base64URL(#"{"sub":"s""#)).sig", "payload is not a JSON object"),
    ])
    func rejectsMalformedIDTokens(jwt: String, phrase: String) {
        let error = F.invalidArgument { _ = try IDTokenClaims(jwt: Secret(jwt)) }
        #expect(error?.message.hasPrefix("id_token") == true)
        #expect(error?.message.contains(phrase) == true, "\(error?.message ?? "no error")")
    }
}
