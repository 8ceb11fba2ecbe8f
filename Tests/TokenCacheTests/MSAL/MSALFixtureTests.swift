import Foundation
import TestSupport
import Testing

@testable import TokenCache
@testable import TokenCacheMSAL

/// Each SDK's fixture imports to the expected entities, and survives an export and a re-import unchanged.
@Suite struct MSALFixtureTests {
    typealias S = MSALTestSupport
    static let uidA = "6f1e0c2a-3b4d-4e5f-8a9b-0c1d2e3f4a5b"
    static let home = "3c5e7a9b-1d2f-4a6c-8e0b-2d4f6a8c0e1a"
    static let guest = "7b9d1f3a-5c7e-4b0d-9f2a-4c6e8a0b2d4f"
    static let sovereign = "0d2f4b6a-8c1e-4f3a-a5c7-9e1b3d5f7a9c"
    static let hidA = "\(uidA).\(home)"
    static let hidB = "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d.\(sovereign)"
    static let fociApp = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
    static let webApp = "5d8e2f1c-3a4b-4c6d-8e9f-0a1b2c3d4e5f"
    static let daemon = "a7c9e1f3-2b4d-4f6a-8c0e-1d3f5b7a9c2e"
    static let t0: Int64 = 1_700_000_000

    private func load(_ name: String) throws -> MSALCacheContent {
        S.sorted(try S.importAll(try MSALFixtures.bytes(name)).content)
    }

    private func secretOf(_ token: AccessToken?) -> String? { token?.secret.reveal() }

    private func counts(_ content: MSALCacheContent) -> [Int] {
        [content.accessTokens.count, content.refreshTokens.count, content.idTokens.count, content.accounts.count,
         content.appMetadata.count, content.unknownSections.count]
    }

    @Test func dotnet() throws {
        let content = try load("dotnet.json")
        #expect(counts(content) == [7, 3, 3, 4, 1, 1])
        let pop = try #require(content.accessTokens.first { $0.tokenType == "pop" })
        #expect(pop == AccessToken(
            homeAccountID: Self.hidA, environment: "login.windows.net", clientID: Self.fociApp, realm: Self.home,
            target: "https://graph.microsoft.com/.default", secret: Secret("dotnet-at-pop"), cachedAt: Self.t0 + 20,
            expiresOn: Self.t0 + 3620, extendedExpiresOn: Self.t0 + 3620, tokenType: "pop", keyID: "dotnet-pop-key-thumbprint"))
        let guest = try #require(content.accessTokens.first { $0.realm == Self.guest })
        #expect(guest.extendedExpiresOn == Self.t0 + 7210)
        #expect(guest.refreshOn == Self.t0 + 1810)
        let app = try #require(content.accessTokens.first { $0.secret.reveal() == "dotnet-at-app" })
        #expect(app.homeAccountID == "")
        #expect(app.clientID == Self.daemon)
        let adfs = try #require(content.accessTokens.first { $0.environment == "fs.contoso.example" })
        #expect(adfs.realm == "")
        #expect(adfs.extendedExpiresOn == -62_135_596_800)
        #expect(adfs.homeAccountID == "adfs-SUB-hash=")
        let obo = try #require(content.accessTokens.first { $0.secret.reveal() == "dotnet-at-obo" })
        #expect(obo.userAssertionHash == "Zm9vYmFyLWFzc2VydGlvbi1oYXNo")
        let usGov = try #require(content.accessTokens.first { $0.environment == "login.microsoftonline.us" })
        #expect(usGov.additionalFields == ["persisted_cache_parameters": .object(["region": .string("usgovvirginia")])])
        let home = try #require(content.accessTokens.first { $0.secret.reveal() == "dotnet-at-home-graph" })
        #expect(home.additionalFields == ["client_info": .string("eyJ1aWQiOiI2ZjFlMGMyYSIsInV0aWQiOiIzYzVlN2E5YiJ9")])
        #expect(home.target == "email openid profile User.Read")
        let family = try #require(content.refreshTokens.first { $0.familyID == "1" })
        #expect(family.owner == .family("1"))
        #expect(family.secret.reveal() == "dotnet-rt-family")
        let account = try #require(content.accounts.first { $0.realm == Self.home })
        #expect(account.additionalFields["wam_account_ids"] == .object([Self.fociApp: .string("wam-account-1")]))
        #expect(account.clientInfo != nil)
        let adfsAccount = try #require(content.accounts.first { $0.authorityType == "ADFS" })
        #expect(adfsAccount.realm == "")
        #expect(content.appMetadata == [AppMetadata(clientID: Self.fociApp, environment: "login.windows.net", familyID: "1")])
        #expect(content.unknownSections["UnknownNodes"] == .object(["future": .object(["version": .integer(2), "flags": .array([.bool(true), .null, .double(1.5)])])]))
    }

    @Test func go() throws {
        let content = try load("go.json")
        #expect(counts(content) == [5, 3, 2, 3, 3, 1])
        let numeric = try #require(content.accessTokens.first { $0.realm == "organizations" })
        #expect(numeric.cachedAt == Self.t0)
        #expect(numeric.expiresOn == Self.t0 + 3600)
        #expect(numeric.target == "s2 s1 s3")
        let ssh = try #require(content.accessTokens.first { $0.tokenType == "ssh-cert" })
        #expect(ssh.keyID == "go-ssh-key-1")
        #expect(ssh.target == "https://pas.windows.net/CloudShell/.default")
        let app = try #require(content.accessTokens.first { $0.clientID == Self.daemon })
        #expect(app.homeAccountID == "")
        #expect(app.additionalFields == ["foo": .string("bar"), "nested": .object(["a": .array([.integer(1), .integer(2)])])])
        let web = try #require(content.refreshTokens.first { $0.clientID == Self.webApp })
        #expect(web.userAssertionHash == "b2JvLWhhc2g")
        let china = try #require(content.refreshTokens.first { $0.environment == "login.chinacloudapi.cn" })
        #expect(china.realm == Self.sovereign)
        #expect(content.accounts.first { $0.realm == Self.guest }?.additionalFields == ["foo": .string("bar")])
        #expect(content.appMetadata.contains(AppMetadata(clientID: Self.fociApp, environment: "login.microsoftonline.com", familyID: "1")))
        #expect(content.appMetadata.contains(AppMetadata(clientID: Self.fociApp, environment: "login.chinacloudapi.cn", familyID: nil)))
        #expect(content.unknownSections == ["unknownEntity": .object(["field1": .string("1"), "field2": .string("whats")])])
    }

    @Test func jsNode() throws {
        let content = try load("js-node.json")
        #expect(counts(content) == [6, 2, 2, 2, 1, 1])
        let pop = try #require(content.accessTokens.first { $0.tokenType == "pop" })
        #expect(pop == AccessToken(
            homeAccountID: Self.hidA, environment: "login.microsoftonline.com", clientID: Self.fociApp, realm: Self.home,
            target: "User.Read", secret: Secret("js-at-pop"), cachedAt: Self.t0 + 1, expiresOn: Self.t0 + 3601,
            extendedExpiresOn: Self.t0 + 7201, tokenType: "pop", keyID: "js-pop-kid"))
        let claims = try #require(content.accessTokens.first { $0.realm == Self.guest })
        #expect(claims.additionalFields["requestedClaimsHash"] == .string("a1b2c3"))
        #expect(claims.tokenType == "Bearer")
        let obo = try #require(content.accessTokens.first { $0.clientID == Self.webApp })
        #expect(obo.userAssertionHash == "anMtb2JvLWhhc2g")
        #expect(obo.homeAccountID == "")
        let family = try #require(content.refreshTokens.first { $0.familyID == "1" })
        #expect(family.expiresOn == Self.t0 + 86400 * 90)
        let account = try #require(content.accounts.first { $0.realm == Self.home })
        #expect(account.name == "Alice Example")
        guard case .array(let profiles) = account.additionalFields["tenantProfiles"] else {
            Issue.record("tenantProfiles not kept")
            return
        }
        #expect(profiles.count == 2)
        #expect(account.additionalFields["last_modification_time"] == .string("1700000000"))
        #expect(content.unknownSections["unknownCacheSection"] == .object(["some-key": .object(["someField": .string("value"), "count": .integer(3)])]))
    }

    @Test func objc() throws {
        let content = try load("objc.json")
        #expect(counts(content) == [4, 3, 2, 3, 2, 1])
        let pop = try #require(content.accessTokens.first { $0.realm == Self.guest })
        #expect(pop.tokenType == "Pop")
        #expect(pop.keyID == "objc-kid-1")
        #expect(pop.cachedAt == 1_700_000_010)
        #expect(pop.expiresOn == 1_700_003_610)
        #expect(pop.additionalFields == ["spe_info": .string("I")])
        let home = try #require(content.accessTokens.first { $0.realm == Self.home && $0.homeAccountID == Self.hidA })
        #expect(home.additionalFields["last_modification_time"] == .string("1700000000.250"))
        #expect(home.additionalFields["expires_in"] == .string("3599"))
        #expect(home.additionalFields.count == 6)
        // The family token and its separate copy for the client are two records.
        let shared = content.refreshTokens.filter { $0.secret.reveal() == "objc-rt-shared" }
        #expect(Set(shared.map(\.owner)) == [.family("1"), .client(Self.fociApp)])
        #expect(shared.allSatisfy { $0.lastModificationTime == 1_700_000_000 })
        let account = try #require(content.accounts.first { $0.realm == Self.home })
        #expect(account.givenName == "Alice")
        #expect(account.alternativeAccountID == "alt-1")
        #expect(content.accounts.contains { $0.environment == "login.sovcloud-identity.fr" })
        #expect(content.unknownSections == ["accountMetadata": .object(["objc-extension": .bool(true)])])
    }

    @Test func pythonLegacy() throws {
        let fold = try S.importAll(try MSALFixtures.bytes("python-legacy.json"))
        let content = S.sorted(fold.content)
        #expect(counts(content) == [4, 2, 2, 3, 1, 1])
        // Two refresh tokens of the family (one per scope set) are one token here. Neither carries a time, so the
        // later entry wins (a token with another secret replaces one without a time: a rotated token imports).
        #expect(fold.mergedCount == 1)
        let family = try #require(content.refreshTokens.first { $0.familyID == "1" })
        #expect(family.secret.reveal() == "pyold-rt-2")
        #expect(family.target == "Files.Read")
        let home = try #require(content.accessTokens.first { $0.realm == Self.home && $0.homeAccountID == Self.hidA })
        #expect(home.target == "User.Read email openid profile")
        #expect(home.cachedAt == 1_562_842_351)
        #expect(home.expiresOn == 1_562_845_950)
        #expect(home.tokenType == "Bearer")
        let guest = try #require(content.accessTokens.first { $0.realm == Self.guest })
        #expect(guest.expiresOn == 1_562_845_999)
        let app = try #require(content.accessTokens.first { $0.clientID == Self.daemon })
        #expect(app.homeAccountID == "")
        #expect(app.cachedAt == 1_562_842_500)
        let guestAccount = try #require(content.accounts.first { $0.realm == Self.guest })
        #expect(guestAccount.username == nil)
        #expect(guestAccount.localAccountID == nil)
        #expect(content.unknownSections == ["SomeLegacySection": .array([.integer(1), .integer(2), .integer(3)])])
    }

    @Test func python139() throws {
        let content = try load("python-1.39.json")
        #expect(counts(content) == [5, 2, 2, 3, 2, 1])
        let common = try #require(content.accessTokens.first { $0.realm == "common" })
        #expect(common == AccessToken(
            homeAccountID: Self.hidA, environment: "login.microsoftonline.com", clientID: Self.fociApp, realm: "common",
            target: "User.Read email openid profile", secret: Secret("py-at-common"), cachedAt: Self.t0, expiresOn: Self.t0 + 4095,
            extendedExpiresOn: Self.t0 + 4095, tokenType: "Bearer"))
        let ssh = try #require(content.accessTokens.first { $0.tokenType == "ssh-cert" })
        #expect(ssh.keyID == "py-ssh-key")
        #expect(content.accessTokens.first { $0.clientID == Self.daemon }?.homeAccountID == "")
        #expect(content.accessTokens.first { $0.environment == "login.partner.microsoftonline.cn" }?.additionalFields == ["ext_cache_hint": .object(["v": .integer(1)])])
        let family = try #require(content.refreshTokens.first { $0.familyID == "1" })
        #expect(family.lastModificationTime == Self.t0)
        #expect(family.target == "User.Read email openid profile")
        #expect(content.appMetadata.contains(AppMetadata(clientID: "04B07795-8DDB-461A-BBEE-02F9E1BF7B46", environment: "login.microsoftonline.com", familyID: "1")))
        #expect(content.accounts.first { $0.realm == Self.guest }?.accountSource == "urn:ietf:params:oauth:grant-type:device_code")
        #expect(content.unknownSections == ["FutureSection": .object(["schema": .string("2")])])
    }

    @Test(arguments: MSALFixtures.names)
    func exportThenReimportGivesTheSameEntitiesAndTheSameBytes(name: String) throws {
        let imported = try S.importAll(try MSALFixtures.bytes(name)).content
        let exported = try MSALCacheWriter.document(imported, revealSecrets: true)
        let reimported = try S.importAll(exported, chunkSize: 5).content
        #expect(S.sorted(reimported) == S.sorted(imported))
        // Entity order does not matter to the bytes.
        var shuffled = reimported
        shuffled.accessTokens.reverse()
        shuffled.accounts.shuffle()
        #expect(try MSALCacheWriter.document(shuffled, revealSecrets: true) == exported)
    }

    @Test func aBoundTokenSharingItsKeyWithAnotherGetsItsTypeAndKeyIDAppended() throws {
        func token(_ tokenType: String?, keyID: String?, secret: String) -> AccessToken {
            AccessToken(
                homeAccountID: "uid.utid", environment: "login.microsoftonline.com", clientID: "c", realm: "r", target: "User.Read",
                secret: Secret(secret), cachedAt: 1, expiresOn: 2, tokenType: tokenType, keyID: keyID)
        }
        var content = MSALCacheContent()
        content.accessTokens = [token(nil, keyID: nil, secret: "B"), token("pop", keyID: "K1", secret: "P1"), token("ssh-cert", keyID: "K2", secret: "S")]
        let text = String(decoding: try MSALCacheWriter.document(content, revealSecrets: true), as: UTF8.self)
        let plain = "uid.utid-login.microsoftonline.com-accesstoken-c-r-user.read"
        for key in [plain, plain + "-pop-K1", plain + "-ssh-cert-K2"] { #expect(text.contains("\"\(key)\": {"), "\(key)") }
        #expect(S.sorted(try S.importAll(Array(text.utf8)).content) == S.sorted(content))
    }

    @Test func theExportHasMSALsShape() throws {
        let content = try S.importAll(try MSALFixtures.bytes("dotnet.json")).content
        let text = String(decoding: try MSALCacheWriter.document(content, revealSecrets: true), as: UTF8.self)
        #expect(text.hasPrefix("{\n  \"AccessToken\": {\n    \"-login.windows.net-accesstoken-\(Self.daemon)-\(Self.home)-https://vault.azure.net/.default\": {\n      \"cached_at\": \"1700000030\",\n      \"client_id\": \"\(Self.daemon)\",\n      \"credential_type\": \"AccessToken\",\n      \"environment\": \"login.windows.net\","))
        // A bound token keeps the plain key (MSAL Python finds access tokens by it) unless another token has it.
        #expect(text.contains("\"\(Self.hidA)-login.windows.net-accesstoken-\(Self.fociApp)-\(Self.home)-https://graph.microsoft.com/.default\": {"))
        // Bound tokens too are of type AccessToken, which MSAL Python asserts when it removes one.
        #expect(!text.contains("AccessToken_With_AuthScheme") && text.contains("\"token_type\": \"pop\""))
        #expect(text.contains("\"key_id\": \"dotnet-pop-key-thumbprint\""))
        #expect(!text.contains("\"kid\""))
        #expect(text.contains("\"cached_at\": \"1700000020\""))
        #expect(text.contains("\"\(Self.hidA)-login.windows.net-refreshtoken-\(Self.fociApp)--\": {"))
        #expect(text.contains("\"\(Self.hidA)-login.windows.net-idtoken-\(Self.fociApp)-\(Self.guest)-\": {"))
        #expect(text.contains("\"adfs-sub-hash=-fs.contoso.example-\": {"))
        #expect(text.contains("\"appmetadata-login.windows.net-\(Self.fociApp)\": {"))
        #expect(text.contains("\"UnknownNodes\": {\"future\":{\"flags\":[true,null,1.5],\"version\":2}}"))
        let sections = ["AccessToken", "Account", "AppMetadata", "IdToken", "RefreshToken", "UnknownNodes"]
        let positions = sections.map { text.range(of: "\n  \"\($0)\": ")?.lowerBound }
        #expect(positions.allSatisfy { $0 != nil })
        #expect(positions.compactMap { $0 } == positions.compactMap { $0 }.sorted())
        #expect(text.hasSuffix("\n}\n"))
        // An app token has no home_account_id member (as .NET and Go write it).
        #expect(!text.contains("\"home_account_id\": \"\""))
        let empty = String(decoding: try MSALCacheWriter.document(MSALCacheContent(), revealSecrets: true), as: UTF8.self)
        #expect(empty == "{\n  \"AccessToken\": {},\n  \"Account\": {},\n  \"AppMetadata\": {},\n  \"IdToken\": {},\n  \"RefreshToken\": {}\n}\n")
    }

    @Test func withoutSecretsEverySecretIsTheMarker() throws {
        for name in MSALFixtures.names {
            let bytes = try MSALFixtures.bytes(name)
            let content = try S.importAll(bytes).content
            let redacted = try MSALCacheWriter.document(content, revealSecrets: false)
            let text = String(decoding: redacted, as: UTF8.self)
            let secrets = content.accessTokens.map(\.secret) + content.refreshTokens.map(\.secret) + content.idTokens.map(\.secret)
            for secret in secrets { #expect(!text.contains("\"\(secret.reveal())\""), "\(name)") }
            let reread = try S.importAll(redacted).content
            let reSecrets = reread.accessTokens.map(\.secret) + reread.refreshTokens.map(\.secret) + reread.idTokens.map(\.secret)
            #expect(reSecrets.count == secrets.count)
            #expect(reSecrets.allSatisfy { $0.reveal() == MSALCacheWriter.redactedSecret })
            #expect(MSALCacheWriter.redactedSecret == "<redacted>")
        }
    }

    @Test func theWriterRefusesWhatItCannotWriteFaithfully() throws {
        var content = MSALCacheContent()
        let token = AccessToken(homeAccountID: "h", environment: "e", clientID: "c", realm: "r", target: "a", secret: Secret("s"),
                                cachedAt: 1, expiresOn: 2, tokenType: "pop", keyID: "k1")
        // Two Bearer tokens whose targets differ only in case: one identity here, one key in MSAL; not written.
        var bearer = token
        (bearer.tokenType, bearer.keyID) = (nil, nil)
        var upper = bearer
        upper.target = "A"
        content.accessTokens = [bearer, upper]
        #expect(throws: MSALCacheWriter.ExportError.self) { try MSALCacheWriter.document(content, revealSecrets: true) }
        content.accessTokens = [token]
        content.unknownSections = ["accessToken": .null]
        #expect(throws: MSALCacheWriter.ExportError.self) { try MSALCacheWriter.document(content, revealSecrets: true) }
        content.unknownSections = [:]
        content.accessTokens = [AccessToken(homeAccountID: "h", environment: "e", clientID: "c", realm: "r", target: "a",
                                            secret: Secret(bytes: [0xFF, 0xFE]), cachedAt: 1, expiresOn: 2)]
        #expect(throws: MSALCacheWriter.ExportError.self) { try MSALCacheWriter.document(content, revealSecrets: true) }
        #expect(try MSALCacheWriter.document(content, revealSecrets: false).count > 0)
    }

    @Test func stringsAreEscapedAndStreamedInPieces() throws {
        var content = MSALCacheContent()
        for index in 0..<2000 {
            content.accounts.append(Account(homeAccountID: "h\(index)", environment: "e", realm: "r\"\\\n\u{1}é", authorityType: "MSSTS",
                                            additionalFields: ["x": .string("\u{2028}")]))
        }
        var pieces: [[UInt8]] = []
        try MSALCacheWriter.write(content, revealSecrets: true) { pieces.append($0) }
        #expect(pieces.count > 2)
        #expect(pieces.dropLast().allSatisfy { $0.count >= MSALCacheWriter.flushSize })
        let document = pieces.flatMap { $0 }
        #expect(String(decoding: document, as: UTF8.self).contains(#""realm": "r\"\\\n\u0001é""#))
        #expect(S.sorted(try S.importAll(document).content) == S.sorted(content))
    }
}
