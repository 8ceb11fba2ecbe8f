import Testing

@testable import TokenCache

@Suite struct ResponseParsingTests {
    typealias F = ResponseFixtures

    @Test func parsesAFullAADResponse() throws {
        let members = F.aadMembers()
        let response = try F.response(members)
        #expect(response.accessToken.reveal() == "eyJ0eXAiOiJKV1QiLCJub25jZSI6.at-payload.at-signature")
        #expect(response.tokenType == "Bearer")
        #expect(response.expiresIn == 4479)
        #expect(response.extExpiresIn == 8079)
        #expect(response.refreshIn == 2239)
        #expect(response.refreshToken?.reveal() == "0.AXEA-refresh-token-material")
        #expect(response.idToken?.reveal() == F.idToken(F.aadClaims()))
        #expect(response.clientInfo == F.clientInfo())
        #expect(response.scope == "User.Read Mail.Read openid profile offline_access")
        #expect(response.foci == "1")
    }

    @Test func parsesAMinimalResponse() throws {
        let response = try TokenResponse(json: Array(#"{"access_token":"at","expires_in":60}"#.utf8))
        #expect(response.accessToken.reveal() == "at")
        #expect(response.expiresIn == 60)
        #expect(response.tokenType == nil)
        #expect(response.extExpiresIn == nil && response.refreshIn == nil)
        #expect(response.refreshToken == nil && response.idToken == nil)
        #expect(response.clientInfo == nil && response.scope == nil && response.foci == nil)
    }

    @Test func acceptsNumericStringsAsADFSSendsThem() throws {
        let text = #"{"access_token":"at","token_type":"bearer","expires_in":"3600","ext_expires_in":"7200","refresh_in":"0"}"#
        let response = try TokenResponse(json: Array(text.utf8))
        #expect(response.expiresIn == 3600)
        #expect(response.extExpiresIn == 7200)
        #expect(response.refreshIn == 0)
        #expect(response.tokenType == "bearer")
    }

    @Test(arguments: [("3600.0", Int64(3600)), ("3.6e3", 3600), ("36E2", 3600), ("0", 0), ("-0", 0), ("315576000", 315_576_000)])
    func acceptsIntegralNumbers(lexeme: String, seconds: Int64) throws {
        let response = try TokenResponse(json: Array(#"{"access_token":"at","expires_in":\#(lexeme)}"#.utf8))
        #expect(response.expiresIn == seconds)
    }

    @Test func skipsALeadingBOMAndSurroundingWhitespace() throws {
        let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(" \n\t{\"access_token\":\"at\",\"expires_in\":1}\r\n".utf8)
        #expect(try TokenResponse(json: bytes).expiresIn == 1)
    }

    @Test func readsEscapesInStrings() throws {
        let text = #"{"access_token":"a\/b\u00e9\ud83d\ude00\n","expires_in":1,"scope":"User.Read\tMail.Read"}"#
        let response = try TokenResponse(json: Array(text.utf8))
        #expect(response.accessToken.reveal() == "a/b\u{E9}\u{1F600}\n")
        #expect(response.scope == "User.Read\tMail.Read")
    }

    @Test func nullAndEmptyOptionalMembersAreAbsent() throws {
        let text = """
            {"access_token":"at","expires_in":1,"token_type":"","ext_expires_in":null,"refresh_in":null,
             "refresh_token":"","id_token":null,"client_info":"","scope":"","foci":null,"error":null}
            """
        let response = try TokenResponse(json: Array(text.utf8))
        #expect(response.tokenType == nil)
        #expect(response.extExpiresIn == nil && response.refreshIn == nil)
        #expect(response.refreshToken == nil && response.idToken == nil)
        #expect(response.clientInfo == nil && response.scope == nil && response.foci == nil)
    }

    @Test func ignoresUnknownMembers() throws {
        let text = #"{"access_token":"at","expires_in":5,"id_token_claims":{"x":[1,2,{"y":null}]},"not_before":"1","correlation_id":7}"#
        #expect(try TokenResponse(json: Array(text.utf8)).expiresIn == 5)
    }

    @Test func acceptsExactlyOneMebibyte() throws {
        let body = Array(#"{"access_token":"at","expires_in":1}"#.utf8)
        let padded = body + [UInt8](repeating: 0x20, count: (1 << 20) - body.count)
        #expect(padded.count == 1 << 20)
        #expect(try TokenResponse(json: padded).expiresIn == 1)
    }

    @Test func rejectsMoreThanOneMebibyteBeforeParsing() {
        // Not even JSON: the size check must come first.
        let bytes = [UInt8](repeating: UInt8(ascii: "x"), count: (1 << 20) + 1)
        let error = F.invalidArgument { _ = try TokenResponse(json: bytes) }
        #expect(error?.message.contains("1 MiB") == true)
    }

    @Test(arguments: [
        (#"{"expires_in":3600}"#, "no access_token"),
        (#"{"access_token":null,"expires_in":3600}"#, "no access_token"),
        (#"{"access_token":"","expires_in":3600}"#, "access_token is empty"),
        (#"{"access_token":42,"expires_in":3600}"#, "access_token must be a JSON string"),
        (#"{"access_token":"at"}"#, "no expires_in"),
        (#"{"access_token":"at","expires_in":-1}"#, "expires_in is negative"),
        (#"{"access_token":"at","expires_in":"-60"}"#, "expires_in is negative"),
        (#"{"access_token":"at","expires_in":-1e309}"#, "expires_in is negative"),
        (#"{"access_token":"at","expires_in":3600,"ext_expires_in":-5}"#, "ext_expires_in is negative"),
        (#"{"access_token":"at","expires_in":3600,"refresh_in":-5}"#, "refresh_in is negative"),
        (#"{"access_token":"at","expires_in":"abc"}"#, "expires_in is not an integer"),
        (#"{"access_token":"at","expires_in":""}"#, "expires_in is not an integer"),
        (#"{"access_token":"at","expires_in":" 60"}"#, "expires_in is not an integer"),
        (#"{"access_token":"at","expires_in":"60.0"}"#, "expires_in is not an integer"),
        (#"{"access_token":"at","expires_in":1e309}"#, "expires_in is not an integer"),
        (#"{"access_token":"at","expires_in":3600.5}"#, "expires_in is not an integer"),
        (#"{"access_token":"at","expires_in":99999999999999999999}"#, "expires_in is not an integer"),
        (#"{"access_token":"at","expires_in":"99999999999999999999"}"#, "expires_in is not an integer"),
        (#"{"access_token":"at","expires_in":315576001}"#, "expires_in is more than ten years"),
        (#"{"access_token":"at","expires_in":60,"refresh_in":"315576001"}"#, "refresh_in is more than ten years"),
        (#"{"access_token":"at","expires_in":true}"#, "expires_in must be a number or a numeric string"),
        (#"{"access_token":"at","expires_in":[60]}"#, "expires_in must be a number or a numeric string"),
        (#"{"access_token":"at","expires_in":60,"refresh_token":5}"#, "refresh_token must be a JSON string"),
        (#"{"access_token":"at","expires_in":60,"id_token":{}}"#, "id_token must be a JSON string"),
        (#"{"access_token":"at","expires_in":60,"client_info":false}"#, "client_info must be a JSON string"),
        (#"{"access_token":"at","expires_in":60,"scope":["User.Read"]}"#, "scope must be a JSON string"),
        (#"{"access_token":"at","expires_in":60,"foci":1}"#, "foci must be a JSON string"),
        (#"{"access_token":"at","expires_in":60,"token_type":1}"#, "token_type must be a JSON string"),
        ("[]", "not a JSON object"),
        (#""access_token""#, "not a JSON object"),
        ("42", "not a JSON object"),
        ("null", "not a JSON object"),
        ("", "not valid JSON"),
        ("{", "not valid JSON"),
        (#"{"access_token":"at","expires_in":60}x"#, "not valid JSON"),
        (#"{"access_token":"at","expires_in":60,}"#, "not valid JSON"),
        (#"{'access_token':'at'}"#, "not valid JSON"),
        (#"{"access_token":"a\qb","expires_in":60}"#, "not valid JSON"),
        (#"{"access_token":"\ud800","expires_in":60}"#, "not valid JSON"),
        (#"{"access_token":"at","expires_in":012}"#, "not valid JSON"),
        (#"{"access_token":"at","expires_in":60,"access_token":"other"}"#, "duplicate member name"),
    ])
    func rejectsMalformedResponses(text: String, phrase: String) {
        let error = F.invalidArgument { _ = try TokenResponse(json: Array(text.utf8)) }
        #expect(error?.message.contains(phrase) == true, "\(error?.message ?? "no error")")
    }

    @Test func rejectsInvalidUTF8AndRawControlCharacters() {
        let invalidUTF8: [UInt8] = Array(#"{"access_token":""#.utf8) + [0xC3, 0x28] + Array(#"","expires_in":1}"#.utf8)
        #expect(F.invalidArgument { _ = try TokenResponse(json: invalidUTF8) }?.message.contains("UTF-8") == true)
        let control = Array("{\"access_token\":\"a\u{1}b\",\"expires_in\":1}".utf8)
        #expect(F.invalidArgument { _ = try TokenResponse(json: control) }?.message.contains("control character") == true)
    }

    @Test func rejectsDeepNesting() {
        let deep = String(repeating: "[", count: 40) + String(repeating: "]", count: 40)
        let text = #"{"access_token":"at","expires_in":1,"x":\#(deep)}"#
        #expect(F.invalidArgument { _ = try TokenResponse(json: Array(text.utf8)) }?.message.contains("nesting") == true)
        // A moderately nested unknown member is fine.
        let shallow = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        #expect(throws: Never.self) { try TokenResponse(json: Array(#"{"access_token":"at","expires_in":1,"x":\#(shallow)}"#.utf8)) }
    }

    @Test func anErrorResponseIsNamedWithItsCodeButNotItsDescription() {
        let text = """
            {"error":"invalid_grant","error_description":"AADSTS70000: The provided grant has expired. Trace ID: 1f2e",
             "error_codes":[70000],"timestamp":"2025-11-20 10:00:00Z","trace_id":"1f2e","correlation_id":"3d4c"}
            """
        let error = F.invalidArgument { _ = try TokenResponse(json: Array(text.utf8)) }
        #expect(error?.message.contains("OAuth error response") == true)
        #expect(error?.message.contains("invalid_grant") == true)
        #expect(error?.message.contains("AADSTS") == false)
        #expect(error?.message.contains("expired") == false)
    }

    @Test func anErrorMemberWinsEvenBesideAnAccessToken() {
        let text = #"{"error":"interaction_required","access_token":"at","expires_in":60}"#
        let error = F.invalidArgument { _ = try TokenResponse(json: Array(text.utf8)) }
        #expect(error?.message.contains("interaction_required") == true)
    }

    @Test(arguments: [#""made_up_code""#, #""Invalid_Grant""#, "42", #"{"code":"invalid_grant"}"#])
    func unregisteredErrorCodesAreNotEchoed(value: String) {
        let error = F.invalidArgument { _ = try TokenResponse(json: Array(#"{"error":\#(value)}"#.utf8)) }
        #expect(error?.message.contains("OAuth error response (error: unrecognized, not shown)") == true)
        #expect(error?.message.contains("made_up") == false)
    }
}
