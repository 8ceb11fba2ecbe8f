import Testing

@testable import TokenCache
@testable import TokenCacheMSAL

@Suite struct MSALEntityMappingTests {
    typealias S = MSALTestSupport

    private func token(_ extra: String = "", replacing removed: [String] = []) throws -> AccessToken {
        try #require(try S.mapOne(S.accessToken(extra, replacing: removed)).accessToken)
    }

    @Test func timestampsAsStringsNumbersFractionsAndNegatives() throws {
        let cases: [(String, Int64)] = [
            (#""1700000000""#, 1_700_000_000), ("1700000000", 1_700_000_000), (#""1562842351.202""#, 1_562_842_351),
            ("1562842351.999", 1_562_842_351), (#""-62135596800""#, -62_135_596_800), ("-1.5", -1), (#""-0.5""#, 0),
            ("1.7e9", 1_700_000_000), (#""000000000000000000001""#, 1), (#""999999999999999999""#, 999_999_999_999_999_999),
        ]
        for (lexeme, seconds) in cases {
            #expect(try token(#""refresh_on": \#(lexeme)"#).refreshOn == seconds, "\(lexeme)")
        }
    }

    @Test func badTimestampsAreRejectedNamingTheField() {
        for lexeme in [#""""#, #"" 1""#, #""1 ""#, #""+1""#, #""0x10""#, #""NaN""#, #""Infinity""#, #""1e3""#, #""1.""#,
                       #"".5""#, #""1000000000000000000""#, "1e18", "1e300", "true", "[1]", #""١٢""#] {
            let failure = S.mappingError(S.accessToken(#""refresh_on": \#(lexeme)"#))
            #expect(failure?.field == "refresh_on", "\(lexeme)")
            #expect(failure?.code == (lexeme.hasPrefix("\"") || lexeme.first!.isNumber ? .invalidValue : .wrongType), "\(lexeme)")
        }
    }

    @Test func anArrayTargetIsJoinedWithSpaces() throws {
        #expect(try token(#""target": ["User.Read", "email"]"#, replacing: ["target"]).target == "User.Read email")
        #expect(S.mappingError(S.accessToken(#""target": ["User.Read", 1]"#, replacing: ["target"]))?.code == .wrongType)
        #expect(S.mappingError(S.accessToken(#""target": []"#, replacing: ["target"]))?.field == "target")
    }

    @Test func extendedExpiryPrefersTheCurrentNameOverTheLegacyOne() throws {
        #expect(try token(#""ext_expires_on": "5""#).extendedExpiresOn == 5)
        #expect(try token(#""ext_expires_on": "5", "extended_expires_on": "6""#).extendedExpiresOn == 6)
        #expect(try token(#""ext_expires_on": "5""#).additionalFields.isEmpty)
    }

    @Test func theKeyIDHasThreeNames() throws {
        #expect(try token(#""key_id": "k1""#).keyID == "k1")
        #expect(try token(#""kid": "k2""#).keyID == "k2")
        #expect(try token(#""keyid": "k3""#).keyID == "k3")
        #expect(try token(#""keyId": "k4""#).keyID == "k4")
        #expect(try token(#""kid": "k5", "key_id": "k5""#).keyID == "k5")
        let conflict = S.mappingError(S.accessToken(#""kid": "k5", "key_id": "k6""#))
        #expect(conflict?.code == .invalidValue)
        #expect(conflict?.field == "key_id")
    }

    @Test func appTokensHaveAnEmptyHomeAccount() throws {
        #expect(try token(#""home_account_id": null"#, replacing: ["home_account_id"]).homeAccountID == "")
        #expect(try token(replacing: ["home_account_id"]).homeAccountID == "")
        #expect(try token(#""home_account_id": """#, replacing: ["home_account_id"]).homeAccountID == "")
    }

    @Test func jsStyleNamesMapToTheModelledFields() throws {
        let entry = """
            {"homeAccountId": "uid.utid", "environment": "login.microsoftonline.com", "clientId": "c", "realm": "r",
             "target": "a", "secret": "s", "cachedAt": "1", "expiresOn": "2", "extendedExpiresOn": "3", "refreshOn": "4",
             "tokenType": "pop", "keyId": "kid", "userAssertionHash": "h", "credentialType": "AccessToken_With_AuthScheme",
             "requestedClaimsHash": "x"}
            """
        let mapped = try #require(try S.mapOne(entry).accessToken)
        #expect(mapped == AccessToken(
            homeAccountID: "uid.utid", environment: "login.microsoftonline.com", clientID: "c", realm: "r", target: "a",
            secret: Secret("s"), cachedAt: 1, expiresOn: 2, extendedExpiresOn: 3, refreshOn: 4, tokenType: "pop", keyID: "kid",
            userAssertionHash: "h", additionalFields: ["requestedClaimsHash": .string("x")]))
    }

    @Test func unknownFieldsAreKeptWithTheirTypes() throws {
        let mapped = try token(#""n": 3, "d": 3.0, "big": 1e300, "list": [null, true, "x"], "obj": {"a": {"b": -1}}, "s": """#)
        #expect(mapped.additionalFields == [
            "n": .integer(3), "d": .double(3), "big": .double(1e300), "list": .array([.null, .bool(true), .string("x")]),
            "obj": .object(["a": .object(["b": .integer(-1)])]), "s": .string(""),
        ])
        #expect(S.mappingError(S.accessToken(#""huge": 1e400"#))?.code == .invalidValue)
    }

    @Test func optionalEmptyStringsAndNullsAreAbsent() throws {
        let account = try #require(try S.mapOne(section: "Account", #"""
            {"home_account_id": "h", "environment": "e", "authority_type": "MSSTS", "username": "", "local_account_id": null}
            """#).account)
        #expect(account == Account(homeAccountID: "h", environment: "e", realm: "", authorityType: "MSSTS"))
    }

    @Test func eachKindMapsItsFields() throws {
        let refresh = try S.mapOne(section: "RefreshToken", #"""
            {"home_account_id": "h", "environment": "e", "client_id": "c", "secret": "s", "family_id": "1", "target": ["a", "b"],
             "realm": "r", "last_modification_time": "1700000000.9", "user_assertion_hash": "u", "expires_on": 9, "credential_type": "RefreshToken"}
            """#)
        #expect(refresh == .refreshToken(RefreshToken(
            homeAccountID: "h", environment: "e", clientID: "c", secret: Secret("s"), familyID: "1", target: "a b", realm: "r",
            lastModificationTime: 1_700_000_000, userAssertionHash: "u", expiresOn: 9)))
        let id = try S.mapOne(section: "IdToken", #"{"home_account_id": "h", "environment": "e", "client_id": "c", "secret": "s", "client_info": "ci"}"#)
        #expect(id == .idToken(IDToken(homeAccountID: "h", environment: "e", clientID: "c", realm: "", secret: Secret("s"), additionalFields: ["client_info": .string("ci")])))
        let metadata = try S.mapOne(section: "AppMetadata", #"{"client_id": "c", "environment": "e", "family_id": ""}"#)
        #expect(metadata == .appMetadata(AppMetadata(clientID: "c", environment: "e")))
    }

    /// MSAL Python's and Go's extended tokens: the key comes in lower-cased; the entry's credential type may read `atext`.
    @Test func anExtendedCacheKeyIsKept() throws {
        for credentialType in ["AccessToken", "atext"] {
            let entity = try S.mapOne(
                section: "AccessToken", S.accessToken(#""credential_type": "\#(credentialType)", "ext_cache_key": "CojvFY5""#, replacing: ["credential_type"])
            )
            guard case .accessToken(let token) = entity else { Issue.record("not an access token"); continue }
            #expect(token.extendedCacheKey == "cojvfy5")
            #expect(token.additionalFields["ext_cache_key"] == nil)
        }
    }

    @Test func requiredFieldsWrongTypesAndBadValues() {
        let cases: [(String, String, MSALImportError.Code, String?)] = [
            ("AccessToken", S.accessToken(replacing: ["secret"]), .missingField, "secret"),
            ("AccessToken", S.accessToken(replacing: ["environment"]), .missingField, "environment"),
            ("AccessToken", S.accessToken(replacing: ["client_id"]), .missingField, "client_id"),
            ("AccessToken", S.accessToken(replacing: ["target"]), .missingField, "target"),
            ("AccessToken", S.accessToken(replacing: ["cached_at"]), .missingField, "cached_at"),
            ("AccessToken", S.accessToken(replacing: ["expires_on"]), .missingField, "expires_on"),
            ("AccessToken", S.accessToken(#""secret": 5"#, replacing: ["secret"]), .wrongType, "secret"),
            ("AccessToken", S.accessToken(#""secret": """#, replacing: ["secret"]), .invalidValue, "secret"),
            ("AccessToken", S.accessToken(#""realm": ["r"]"#, replacing: ["realm"]), .wrongType, "realm"),
            ("AccessToken", S.accessToken(#""target": "User.Read \u0000""#, replacing: ["target"]), .invalidValue, "target"),
            ("AccessToken", S.accessToken(#""target": "Usér.Read""#, replacing: ["target"]), .invalidValue, "target"),
            ("AccessToken", S.accessToken(#""target": "   ""#, replacing: ["target"]), .invalidValue, "target"),
            ("AccessToken", S.accessToken(#""credential_type": "RefreshToken""#, replacing: ["credential_type"]), .invalidValue, "credential_type"),
            ("AccessToken", S.accessToken(#""credential_type": "ATExt""#, replacing: ["credential_type"]), .unsupported, "credential_type"),
            ("AccessToken", S.accessToken(#""ext_cache_key": "a b""#), .invalidValue, "ext_cache_key"),
            ("AccessToken", S.accessToken(#""ext_cache_key": 7"#), .wrongType, "ext_cache_key"),
            ("AccessToken", S.accessToken(#""ext": {"fmi_path": "p"}"#), .unsupported, "ext"),
            ("RefreshToken", #"{"environment": "e", "client_id": "c", "secret": "s"}"#, .missingField, "home_account_id"),
            ("RefreshToken", #"{"home_account_id": "h", "environment": "e", "client_id": "c", "secret": "s", "ext": {}}"#, .unsupported, "ext"),
            ("IdToken", #"{"home_account_id": "h", "environment": "e", "client_id": "c", "secret": "s", "credential_type": "AccessToken"}"#, .invalidValue, "credential_type"),
            ("Account", #"{"home_account_id": "h", "environment": "e"}"#, .missingField, "authority_type"),
            ("Account", #"{"home_account_id": "h", "environment": "e", "authority_type": "MSSTS", "Username": "a", "username": "b"}"#, .invalidValue, "username"),
            ("AppMetadata", #"{"environment": "e"}"#, .missingField, "client_id"),
            ("AppMetadata", #"{"client_id": "c", "environment": "e", "family_id": 1}"#, .wrongType, "family_id"),
            ("AppMetadata", #"["not", "an", "object"]"#, .notAnObject, nil),
            ("Account", #""a string""#, .notAnObject, nil),
        ]
        for (section, entry, code, field) in cases {
            let failure = S.mappingError(section: section, key: "the-key", entry)
            #expect(failure?.code == code, "\(entry)")
            #expect(failure?.field == field, "\(entry)")
            #expect(failure?.section == section, "\(entry)")
            #expect(failure?.key == "the-key", "\(entry)")
        }
    }

    @Test func messagesNameSectionKeyAndFieldButNeverTheSecret() throws {
        let canary = "AT-CANARY-7731"
        for (extra, removed) in [(#""cached_at": "soon""#, ["cached_at"]), (#""target": "bad\u0001scope""#, ["target"]),
                                  (#""secret": "AT-CANARY-7731", "Secret": "other""#, ["secret"]), (#""kid": 1"#, [])] {
            let failure = try #require(S.mappingError(section: "accesstoken", key: "uid.utid-env-accesstoken", S.accessToken(extra, replacing: removed)))
            let message = failure.description
            #expect(!message.contains(canary), "\(message)")
            #expect(message.contains("section \"accesstoken\""), "\(message)")
            #expect(message.contains("entry \"uid.utid-env-accesstoken\""), "\(message)")
            #expect(message.contains("field \(failure.field ?? "?")"), "\(message)")
            #expect(failure.tokenCacheError.code == .invalidArgument)
        }
    }

    @Test func keysAreEscapedForDisplay() throws {
        let failure = try #require(S.mappingError(key: #"evil\u202e\u001b[31m\"key"#, S.accessToken(replacing: ["secret"])))
        #expect(failure.key == "evil\u{202E}\u{1B}[31m\"key")
        #expect(failure.description.contains(#"entry "evil\u{202E}\u{1B}[31m\"key""#), "\(failure.description)")
        let long = MSALImportError.displayed(String(repeating: "k", count: 500))
        #expect(long.count == MSALImportError.displayLimit + 1)
    }
}
