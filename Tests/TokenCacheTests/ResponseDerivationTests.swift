import TestSupport
import Testing

@testable import TokenCache

@Suite struct ResponseDerivationTests {
    typealias F = ResponseFixtures
    let hid = "\(ResponseFixtures.uid).\(ResponseFixtures.utid)"

    /// Every derived entity must pass the store's own validation.
    func expectStorable(_ derived: DerivedEntities, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(throws: Never.self, sourceLocation: sourceLocation) {
            try derived.accessToken.validate()
            try derived.refreshToken?.validate()
            try derived.idToken?.validate()
            try derived.account?.validate()
            try derived.appMetadata.validate()
        }
    }

    @Test func aadUserResponseDerivesAllFiveEntities() throws {
        let derived = try F.derive(F.aadMembers(), F.context())
        expectStorable(derived)
        let now = F.now

        let at = derived.accessToken
        #expect(at.homeAccountID == hid)
        #expect(at.environment == "login.microsoftonline.com")
        #expect(at.clientID == F.clientID)
        #expect(at.realm == F.utid)
        #expect(at.target == "User.Read Mail.Read openid profile offline_access")
        #expect(at.secret.reveal() == "eyJ0eXAiOiJKV1QiLCJub25jZSI6.at-payload.at-signature")
        #expect(at.cachedAt == now)
        #expect(at.expiresOn == now + 4479)
        #expect(at.extendedExpiresOn == now + 8079)
        #expect(at.refreshOn == now + 2239)
        #expect(at.tokenType == "Bearer")
        #expect(at.keyID == nil && at.userAssertionHash == nil && at.additionalFields.isEmpty)

        let rt = try #require(derived.refreshToken)
        #expect(rt.homeAccountID == hid)
        #expect(rt.environment == "login.microsoftonline.com")
        #expect(rt.clientID == F.clientID)
        #expect(rt.secret.reveal() == "0.AXEA-refresh-token-material")
        #expect(rt.familyID == "1")
        #expect(rt.target == at.target)
        #expect(rt.realm == nil)
        #expect(rt.lastModificationTime == now)
        #expect(rt.expiresOn == nil)

        let idt = try #require(derived.idToken)
        #expect(idt.homeAccountID == hid)
        #expect(idt.environment == "login.microsoftonline.com")
        #expect(idt.clientID == F.clientID)
        #expect(idt.realm == F.utid)
        #expect(idt.secret.reveal() == F.idToken(F.aadClaims()))

        let account = try #require(derived.account)
        #expect(account.homeAccountID == hid)
        #expect(account.environment == "login.microsoftonline.com")
        #expect(account.realm == F.utid)
        #expect(account.localAccountID == F.uid)
        #expect(account.username == "adele.vance@contoso.example")
        #expect(account.authorityType == "MSSTS")
        #expect(account.accountSource == "authorization_code")
        #expect(account.name == "Adele Vance")
        #expect(account.givenName == nil && account.familyName == nil && account.middleName == nil)
        #expect(account.clientInfo == F.clientInfo())

        #expect(derived.appMetadata.clientID == F.clientID)
        #expect(derived.appMetadata.environment == "login.microsoftonline.com")
        #expect(derived.appMetadata.familyID == "1")
    }

    @Test func namesComeFromTheClaims() throws {
        var claims = F.aadClaims()
        claims["given_name"] = .string("Adele")
        claims["family_name"] = .string("Vance")
        claims["middle_name"] = .string("Q")
        let account = try #require(try F.derive(F.aadMembers(claims: claims), F.context()).account)
        #expect(account.givenName == "Adele")
        #expect(account.familyName == "Vance")
        #expect(account.middleName == "Q")
    }

    @Test func guestTenantThroughOrganizationsStoresTheTokenTenant() throws {
        // A guest sign-in: the home account stays uid.utid; the token (and its tid) is for the guest tenant.
        let claims = F.aadClaims(tid: F.guestTenant, oid: "5d6e7f80-91a2-4b3c-8d4e-5f6a7b8c9d0e")
        let derived = try F.derive(F.aadMembers(claims: claims), F.context("https://login.microsoftonline.com/organizations/"))
        expectStorable(derived)
        #expect(derived.accessToken.homeAccountID == hid)
        #expect(derived.accessToken.realm == F.guestTenant)
        #expect(derived.idToken?.realm == F.guestTenant)
        #expect(derived.account?.realm == F.guestTenant)
        #expect(derived.account?.localAccountID == "5d6e7f80-91a2-4b3c-8d4e-5f6a7b8c9d0e")
    }

    @Test func commonWithAnMSAAccountStoresTheConsumersTenant() throws {
        let msaHID = "\(User.uid).\(User.utid)"
        let claims = F.aadClaims(
            tid: User.utid, oid: User.uid, sub: "AAAAAAAAAAAAAAAAAAAAAM0YxqS0eNbq5J7k2mYoK1o",
            preferredUsername: "someone@outlook.example", name: "Some One"
        )
        let members = F.aadMembers(claims: claims, clientInfo: F.clientInfo(uid: User.uid, utid: User.utid), foci: nil)
        let derived = try F.derive(members, F.context("https://login.microsoftonline.com/common/v2.0"))
        expectStorable(derived)
        #expect(derived.accessToken.homeAccountID == msaHID)
        #expect(derived.accessToken.realm == User.utid)
        #expect(derived.idToken?.realm == User.utid)
        #expect(derived.account?.realm == User.utid)
        #expect(derived.account?.username == "someone@outlook.example")
        #expect(derived.account?.authorityType == "MSSTS")
    }

    @Test func tenantlessAuthorityWithoutTidKeepsTheAuthorityTenant() throws {
        var claims = F.aadClaims()
        claims["tid"] = nil
        let derived = try F.derive(F.aadMembers(claims: claims), F.context("https://login.microsoftonline.com/common"))
        #expect(derived.accessToken.realm == "common")
        #expect(derived.account?.realm == "common")

        var members = F.aadMembers()
        members["id_token"] = nil
        let withoutIDToken = try F.derive(members, F.context("https://login.microsoftonline.com/Organizations"))
        #expect(withoutIDToken.accessToken.realm == "Organizations")
    }

    @Test func tenantedAuthorityIgnoresTheTid() throws {
        // A tenanted authority is the realm even if the id_token says otherwise.
        let claims = F.aadClaims(tid: F.guestTenant)
        let derived = try F.derive(F.aadMembers(claims: claims), F.context("https://login.microsoftonline.com/Contoso.onmicrosoft.com"))
        #expect(derived.accessToken.realm == "Contoso.onmicrosoft.com")
        #expect(derived.account?.realm == "Contoso.onmicrosoft.com")
    }

    @Test func adfsResponse() throws {
        // ADFS: no client_info, token_type "bearer", lifetimes as strings, upn/unique_name instead of preferred_username.
        let claims: [String: JSONValue] = [
            "aud": .string(F.clientID), "iss": .string("https://fs.contoso.com/adfs"), "iat": .integer(F.now),
            "nbf": .integer(F.now), "exp": .integer(F.now + 3600), "auth_time": .integer(F.now - 10),
            "sub": .string("xkI8wHqP3ux2UdaY3B+0mU1tz6R8IN2dUzqvsoTFqYs="), "upn": .string("adfsuser@contoso.example"),
            "unique_name": .string("CONTOSO\\adfsuser"), "sid": .string("S-1-5-21-3113"), "apptype": .string("Public"),
            "appid": .string(F.clientID), "authmethod": .string("urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"),
            "ver": .string("1.0"), "scp": .string("openid"),
        ]
        let text = """
            {"access_token":"adfs-at","token_type":"bearer","expires_in":"3600","refresh_token":"adfs-rt",
             "refresh_token_expires_in":"28800","scope":"openid profile","id_token":"\(F.idToken(claims))"}
            """
        let response = try TokenResponse(json: Array(text.utf8))
        let derived = try DerivedEntities(response: response, context: try F.context("https://fs.contoso.com/adfs/", scopes: ["openid"]))
        expectStorable(derived)
        let sub = "xkI8wHqP3ux2UdaY3B+0mU1tz6R8IN2dUzqvsoTFqYs="
        #expect(derived.accessToken.homeAccountID == sub)
        #expect(derived.accessToken.environment == "fs.contoso.com")
        #expect(derived.accessToken.realm == "adfs")
        #expect(derived.accessToken.tokenType == "bearer")
        #expect(derived.accessToken.expiresOn == F.now + 3600)
        #expect(derived.accessToken.extendedExpiresOn == F.now + 3600)
        #expect(derived.accessToken.refreshOn == nil)
        #expect(derived.accessToken.target == "openid profile")
        #expect(derived.refreshToken?.homeAccountID == sub)
        #expect(derived.refreshToken?.familyID == nil)
        let account = try #require(derived.account)
        #expect(account.homeAccountID == sub)
        #expect(account.realm == "adfs")
        #expect(account.authorityType == "ADFS")
        #expect(account.username == "adfsuser@contoso.example")
        #expect(account.localAccountID == sub)
        #expect(account.clientInfo == nil)
        #expect(derived.idToken?.homeAccountID == sub)
        #expect(derived.appMetadata.environment == "fs.contoso.com")
        #expect(derived.appMetadata.familyID == nil)
    }

    @Test func clientCredentialsHaveNoAccount() throws {
        let text = #"{"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":"app-at"}"#
        let context = try F.context(scopes: ["https://graph.microsoft.com/.default"], grantType: "client_credentials")
        let derived = try DerivedEntities(response: try TokenResponse(json: Array(text.utf8)), context: context)
        expectStorable(derived)
        #expect(derived.accessToken.homeAccountID == "")
        #expect(derived.accessToken.realm == F.utid)
        #expect(derived.accessToken.target == "https://graph.microsoft.com/.default")
        #expect(derived.refreshToken == nil)
        #expect(derived.idToken == nil)
        #expect(derived.account == nil)
        #expect(derived.appMetadata.clientID == F.clientID)
    }

    @Test func clientCredentialsNeverKeepUserArtifacts() throws {
        // Unusual: a client-credentials response carrying an RT, client_info and an id_token. Nothing user-shaped
        // survives, because there is no account to attach it to.
        let derived = try F.derive(F.aadMembers(), F.context(grantType: "client_credentials"))
        expectStorable(derived)
        #expect(derived.accessToken.homeAccountID == "")
        #expect(derived.refreshToken == nil)
        #expect(derived.idToken == nil)
        #expect(derived.account == nil)
    }

    @Test func neitherClientInfoNorIDTokenIsAnAppToken() throws {
        let response = TokenResponse(accessToken: Secret("at"), expiresIn: 60, refreshToken: Secret("rt"), scope: "User.Read")
        let derived = try DerivedEntities(response: response, context: try F.context(grantType: nil))
        expectStorable(derived)
        #expect(derived.accessToken.homeAccountID == "")
        #expect(derived.accessToken.tokenType == "Bearer")
        #expect(derived.refreshToken == nil)
        #expect(derived.account == nil)
    }

    @Test func aResponseWithoutScopeUsesTheRequestedScopes() throws {
        var members = F.aadMembers()
        members["scope"] = nil
        let derived = try F.derive(members, F.context(scopes: ["User.Read", " Calendars.Read  openid ", "Mail.Send"]))
        #expect(derived.accessToken.target == "User.Read Calendars.Read openid Mail.Send")
        #expect(derived.refreshToken?.target == "User.Read Calendars.Read openid Mail.Send")
    }

    @Test func theResponseScopeWinsWithServerCasingAndOrder() throws {
        var members = F.aadMembers()
        members["scope"] = .string(" https://graph.microsoft.com/User.Read\t\tEmail  openid ")
        let derived = try F.derive(members, F.context(scopes: ["user.read"]))
        #expect(derived.accessToken.target == "https://graph.microsoft.com/User.Read Email openid")
    }

    @Test func aWhitespaceOnlyScopeFallsBackToTheRequest() throws {
        let response = TokenResponse(accessToken: Secret("at"), expiresIn: 60, clientInfo: F.clientInfo(), scope: "  \t ")
        let derived = try DerivedEntities(response: response, context: try F.context(scopes: ["Files.Read"]))
        #expect(derived.accessToken.target == "Files.Read")
    }

    @Test func aResponseWithoutIDTokenHasNoAccount() throws {
        var members = F.aadMembers()
        members["id_token"] = nil
        let derived = try F.derive(members, F.context(grantType: "refresh_token"))
        expectStorable(derived)
        #expect(derived.account == nil)
        #expect(derived.idToken == nil)
        #expect(derived.accessToken.homeAccountID == hid)
        #expect(derived.refreshToken?.homeAccountID == hid)
    }

    @Test func fociPresentAbsentAndEmpty() throws {
        let member = try F.derive(F.aadMembers(foci: "1"), F.context())
        #expect(member.refreshToken?.familyID == "1")
        #expect(member.appMetadata.familyID == "1")

        let absent = try F.derive(F.aadMembers(foci: nil), F.context())
        #expect(absent.refreshToken?.familyID == nil)
        #expect(absent.appMetadata.familyID == nil)

        let empty = try F.derive(F.aadMembers(foci: ""), F.context())
        #expect(empty.refreshToken?.familyID == nil)
        #expect(empty.appMetadata.familyID == nil)
    }

    @Test func expiryFieldsAreRelativeToNow() throws {
        let now: Int64 = 1_700_000_000
        var members = F.aadMembers()
        members["ext_expires_in"] = nil
        members["refresh_in"] = nil
        members["expires_in"] = .string("3600")
        let plain = try F.derive(members, F.context(now: now))
        #expect(plain.accessToken.cachedAt == now)
        #expect(plain.accessToken.expiresOn == now + 3600)
        #expect(plain.accessToken.extendedExpiresOn == now + 3600)
        #expect(plain.accessToken.refreshOn == nil)
        #expect(plain.refreshToken?.lastModificationTime == now)

        members["refresh_in"] = .integer(1800)
        members["ext_expires_in"] = .integer(86400)
        let withRefresh = try F.derive(members, F.context(now: now))
        #expect(withRefresh.accessToken.refreshOn == now + 1800)
        #expect(withRefresh.accessToken.extendedExpiresOn == now + 86400)
    }

    @Test func zeroLifetimeIsAcceptedAndExpiresNow() throws {
        let response = TokenResponse(accessToken: Secret("at"), expiresIn: 0, clientInfo: F.clientInfo(), scope: "a")
        let derived = try DerivedEntities(response: response, context: try F.context())
        #expect(derived.accessToken.expiresOn == F.now)
    }

    @Test func tokenTypeIsNilWhenAbsent() throws {
        var members = F.aadMembers()
        members["token_type"] = nil
        #expect(try F.derive(members, F.context()).accessToken.tokenType == nil)
        members["token_type"] = .string("pop")
        #expect(try F.derive(members, F.context()).accessToken.tokenType == "pop")
    }

    @Test func accountSourceIsTheGrantType() throws {
        let grant = "urn:ietf:params:oauth:grant-type:device_code"
        #expect(try F.derive(F.aadMembers(), F.context(grantType: grant)).account?.accountSource == grant)
        #expect(try F.derive(F.aadMembers(), F.context(grantType: nil)).account?.accountSource == nil)
    }

    @Test func anIDTokenWithoutTidOidOrSubIsFineBesideClientInfo() throws {
        let claims: [String: JSONValue] = ["aud": .string(F.clientID), "ver": .string("2.0"), "name": .string("No Ids")]
        let derived = try F.derive(F.aadMembers(claims: claims), F.context())
        expectStorable(derived)
        #expect(derived.account?.homeAccountID == hid)
        #expect(derived.account?.localAccountID == nil)
        #expect(derived.account?.username == nil)
        #expect(derived.account?.name == "No Ids")
    }

    @Test func anIDTokenWithoutSubAndWithoutClientInfoIsRejected() throws {
        var members = F.aadMembers(claims: ["name": .string("x")])
        members["client_info"] = nil
        let error = F.invalidArgument { _ = try F.derive(members, F.context()) }
        #expect(error?.message.contains("sub") == true)
    }

    @Test func withoutClientInfoTheSubIsTheHomeAccount() throws {
        var members = F.aadMembers()
        members["client_info"] = nil
        let derived = try F.derive(members, F.context())
        #expect(derived.accessToken.homeAccountID == "AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ")
        #expect(derived.account?.clientInfo == nil)
        #expect(derived.account?.authorityType == "MSSTS")
    }

    // MARK: Malformed responses

    @Test(arguments: [
        ("client_info", JSONValue.string("%%%not-base64%%%"), "client_info is not base64url JSON"),
        ("client_info", .string(base64URL(#"{"uid":"u"}"#)), "client_info is not base64url JSON"),
        ("client_info", .string(base64URL("uid.utid")), "client_info is not base64url JSON"),
        ("id_token", .string("eyJhbGciOiJub25lIn0.\(base64URL("<html>")).sig"), "id_token payload is not a JSON object"),
        ("id_token", .string("eyJhbGciOiJub25lIn0.eyJzdWIiOiJzIn0"), "id_token is not a JWT of three"),
        ("id_token", .string("eyJhbGciOiJub25lIn0.e$J.sig"), "id_token payload is not base64url"),
        ("scope", .string("User.Read Mail\"Read"), "token response scope"),
        ("scope", .string("User.Read Ma\u{EF}l.Read"), "token response scope"),
    ])
    func malformedPartsRejectTheWholeResponse(member: String, value: JSONValue, phrase: String) {
        var members = F.aadMembers()
        members[member] = value
        let error = F.invalidArgument { _ = try F.derive(members, F.context()) }
        #expect(error?.message.contains(phrase) == true, "\(error?.message ?? "no error")")
    }

    @Test func invalidRequestedScopesAreRejectedWhenUsed() throws {
        var members = F.aadMembers()
        members["scope"] = nil
        let error = F.invalidArgument { _ = try F.derive(members, F.context(scopes: ["User.Read", "bad\\scope"])) }
        #expect(error?.message.contains("requestedScopes") == true)
        // Not used (the response has a scope): not checked.
        #expect(throws: Never.self) { try F.derive(F.aadMembers(), F.context(scopes: ["bad\\scope"])) }
    }

    @Test func noScopeAnywhereIsRejected() {
        let response = TokenResponse(accessToken: Secret("at"), expiresIn: 60)
        let error = F.invalidArgument { _ = try DerivedEntities(response: response, context: try F.context(scopes: ["", "  "])) }
        #expect(error?.message.contains("no scope") == true)
    }

    @Test(arguments: [
        (TokenResponse(accessToken: Secret(""), expiresIn: 60, scope: "a"), "access_token is empty"),
        (TokenResponse(accessToken: Secret("at"), expiresIn: -1, scope: "a"), "expires_in is negative"),
        (TokenResponse(accessToken: Secret("at"), expiresIn: 60, extExpiresIn: -1, scope: "a"), "ext_expires_in is negative"),
        (TokenResponse(accessToken: Secret("at"), expiresIn: 60, refreshIn: -1, scope: "a"), "refresh_in is negative"),
        (TokenResponse(accessToken: Secret("at"), expiresIn: .max, scope: "a"), "expires_in is more than ten years"),
    ])
    func memberwiseResponsesAreValidatedToo(response: TokenResponse, phrase: String) {
        let error = F.invalidArgument { _ = try DerivedEntities(response: response, context: try F.context()) }
        #expect(error?.message.contains(phrase) == true, "\(error?.message ?? "no error")")
    }

    @Test func theContextIsValidated() throws {
        let response = TokenResponse(accessToken: Secret("at"), expiresIn: 60, scope: "a")
        var context = try F.context()
        context.clientID = ""
        #expect(F.invalidArgument { _ = try DerivedEntities(response: response, context: context) }?.message.contains("clientID") == true)
        context = try F.context(now: -1)
        #expect(F.invalidArgument { _ = try DerivedEntities(response: response, context: context) }?.message.contains("now") == true)
        context = try F.context(now: .max - 10)
        #expect(F.invalidArgument { _ = try DerivedEntities(response: response, context: context) }?.message.contains("now") == true)
        // The latest accepted `now` plus the longest lifetime does not overflow.
        let longest = TokenResponse(accessToken: Secret("at"), expiresIn: TokenResponse.maximumLifetime, scope: "a")
        let derived = try DerivedEntities(response: longest, context: try F.context(now: DerivedEntities.latestNow))
        #expect(derived.accessToken.expiresOn == DerivedEntities.latestNow + TokenResponse.maximumLifetime)
    }
}
