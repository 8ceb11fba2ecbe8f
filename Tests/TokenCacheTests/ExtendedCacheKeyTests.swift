import Foundation
import TestSupport
import Testing

@testable import TokenCache
@testable import TokenCacheMSAL
@testable import TokenCacheRecords

/// MSAL's extended cache key: derived as MSAL Python derives it, and a partition of the access tokens that no other
/// query sees (Docs/Semantics.md, "Extended cache keys").
@Suite struct ExtendedCacheKeyTests {
    /// Keys MSAL Python 1.39's `_compute_ext_cache_key` gives for the same parameters.
    @Test(arguments: [
        (["fmi_path": "SomeFmiPath/FmiCredentialPath"], "cojvfy5tzae3njpkvcebguvvx5vvmnj8hphqrbogjoi"),
        // Standard parameters take no part.
        (["fmi_path": "SomeFmiPath/FmiCredentialPath", "grant_type": "client_credentials", "scope": "x"], "cojvfy5tzae3njpkvcebguvvx5vvmnj8hphqrbogjoi"),
        (["fmi_path": "a", "client_claims": #"{"xms_az_claim":"v"}"#], "sxt4fn-_x9u5-wdmkko9tz6ulokgcce6ryvhw3sb0xi"),
        // Lengths are UTF-8 byte counts.
        (["fmi_path": "é/ü"], "x_3nbs0yvi5p1mfq9nbnimsw7kt4liiyvuzvkpjvqrs"),
        // Sorted bytewise: upper case before lower case.
        (["b": "1", "a": "2", "Z": "3"], "xt5aj2d_-81uhl-yrxv1otrrnjaroviikcqtb8dcrdu"),
    ])
    func derivedAsMSALPythonDerivesIt(parameters: [String: String], expected: String) {
        #expect(ExtendedCacheKey(parameters: parameters)?.value == expected)
    }

    @Test func onlyStandardOrEmptyParametersMakeNoKey() {
        #expect(ExtendedCacheKey(parameters: [:]) == nil)
        #expect(ExtendedCacheKey(parameters: ["grant_type": "client_credentials", "fmi_path": ""]) == nil)
        #expect(ExtendedCacheKey(parameters: Dictionary(uniqueKeysWithValues: ExtendedCacheKey.standardParameters.map { ($0, "v") })) == nil)
    }

    @Test func aGivenKeyIsLowerCasedAndChecked() throws {
        #expect(try ExtendedCacheKey("AbC-_1").value == "abc-_1")
        for bad in ["", "a b", "tab\there", String(repeating: "k", count: ExtendedCacheKey.maximumLength + 1), "clé"] {
            let error = #expect(throws: TokenCacheError.self) { try ExtendedCacheKey(bad) }
            #expect(error?.code == .invalidArgument)
        }
    }

    /// App tokens for one client, tenant and scopes: one plain, two under different FMI paths. Each query sees its own
    /// and nothing else; a write in one partition leaves the others alone.
    @Test(arguments: TestBackend.allCases)
    func eachKeyIsAPartitionOfItsOwn(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let pathA = ExtendedCacheKey(parameters: ["fmi_path": "Path/A"])!
            let pathB = ExtendedCacheKey(parameters: ["fmi_path": "Path/B"])!
            func ingest(_ secret: String, _ key: ExtendedCacheKey?) throws {
                let response = try TokenResponse(json: #"{"access_token":"\#(secret)","token_type":"Bearer","expires_in":3600}"#)
                try cache.ingest(response, context: Self.appContext(key))
            }
            func answer(_ key: ExtendedCacheKey?) throws -> String? {
                try cache.silentLookup(Self.appQuery(key)).accessToken?.entity.secret.reveal()
            }
            try ingest("at-a", pathA)
            // Only a token under another key: a query without one finds nothing.
            #expect(try answer(nil) == nil)
            #expect(try cache.silentLookup(Self.appQuery(nil)).outcome == .interactionRequired)
            try ingest("at-plain", nil)
            try ingest("at-b", pathB)
            #expect(try answer(nil) == "at-plain")
            #expect(try answer(pathA) == "at-a")
            #expect(try answer(pathB) == "at-b")
            #expect(try answer(ExtendedCacheKey(parameters: ["fmi_path": "Path/C"])) == nil)
            // A new token for the same scopes replaces only its own partition's.
            try ingest("at-a-2", pathA)
            #expect(try answer(pathA) == "at-a-2")
            #expect(try answer(nil) == "at-plain" && answer(pathB) == "at-b")
            #expect(try cache.info().recordCounts[.accessToken] == 3)
            // The key is stored with the token, and the record is where its fields say (verify recomputes keys).
            let stored = try #require(try cache.silentLookup(Self.appQuery(pathB)).accessToken)
            #expect(stored.entity.extendedCacheKey == pathB.value)
            #expect(try cache.verify().isClean)
        }
    }

    /// An MSAL Python cache with a plain app token and one under an FMI path: both come in, each answers only its own
    /// query, and the export gives the extended one MSAL Python's key (`…-atext-…-<key>`) and field back.
    @Test(arguments: TestBackend.allCases)
    func importAndExportKeepTheKey(backend: TestBackend) throws {
        let path = ExtendedCacheKey(parameters: ["fmi_path": "SomeFmiPath/FmiCredentialPath"])!
        let realm = User.utid, client = User.client, scope = "https://graph.microsoft.com/.default"
        func entry(_ secret: String, _ ext: String?) -> String {
            let extField = ext.map { #", "ext_cache_key": "\#($0)""# } ?? ""
            return #"{"credential_type": "AccessToken", "secret": "\#(secret)", "home_account_id": null, "environment": "login.microsoftonline.com", "client_id": "\#(client)", "target": "\#(scope)", "realm": "\#(realm)", "token_type": "Bearer", "cached_at": "\#(ReferenceTime.now)", "expires_on": "\#(ReferenceTime.now + 3600)", "extended_expires_on": "\#(ReferenceTime.now + 3600)"\#(extField)}"#
        }
        let plainKey = "-login.microsoftonline.com-accesstoken-\(client)-\(realm)-\(scope)"
        let document = #"{"AccessToken": {"\#(plainKey)": \#(entry("at-plain", nil)), "\#(plainKey)-\#(path.value)": \#(entry("at-fmi", path.value))}}"#
        try TestStore.with(backend) { _, cache in
            let report = try cache.importMSAL(from: .bytes(Array(document.utf8)))
            #expect(report.written[.accessToken] == 2, "\(report)")
            #expect(try cache.silentLookup(Self.appQuery(nil)).accessToken?.entity.secret.reveal() == "at-plain")
            #expect(try cache.silentLookup(Self.appQuery(path)).accessToken?.entity.secret.reveal() == "at-fmi")
            let exported = try cache.exportMSAL(options: MSALExportOptions(includeSecrets: true)).document
            let tokens = try #require((try JSONSerialization.jsonObject(with: Data(exported)) as? [String: Any])?["AccessToken"] as? [String: [String: Any]])
            let extendedKey = "-login.microsoftonline.com-atext-\(client)-\(realm)-\(scope)-\(path.value)".lowercased()
            #expect(Set(tokens.keys) == [plainKey.lowercased(), extendedKey])
            #expect(tokens[extendedKey]?["ext_cache_key"] as? String == path.value)
            #expect(tokens[extendedKey]?["credential_type"] as? String == "AccessToken")
            #expect(tokens[plainKey.lowercased()]?["ext_cache_key"] == nil)
        }
    }

    static func appContext(_ key: ExtendedCacheKey?) throws -> TokenRequestContext {
        TokenRequestContext(
            clientID: User.client, authority: try Authority("https://login.microsoftonline.com/\(User.utid)"),
            requestedScopes: ["https://graph.microsoft.com/.default"], grantType: "client_credentials", now: ReferenceTime.now,
            extendedCacheKey: key
        )
    }

    static func appQuery(_ key: ExtendedCacheKey?) -> SilentLookupQuery {
        SilentLookupQuery(
            clientID: User.client, homeAccountID: "", environment: User.cloud, realm: User.utid,
            scopes: ["https://graph.microsoft.com/.default"], extendedCacheKey: key, now: ReferenceTime.now
        )
    }
}

/// The base64url encoder MSAL's partition digests are written with: RFC 4648's vectors, and every length round-trips
/// through the decoder.
@Suite struct Base64URLEncodingTests {
    @Test func rfc4648VectorsWithoutPadding() {
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors { #expect(Base64URL.encode(Array(plain.utf8)) == encoded, "\(plain)") }
        #expect(Base64URL.encode([0xFB, 0xFF, 0xBF]) == "-_-_")
    }

    @Test func everyLengthRoundTrips() {
        for count in 0..<40 {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 73 &+ 11) }
            #expect(Base64URL.decode(Array(Base64URL.encode(bytes).utf8)) == bytes, "\(count)")
        }
    }
}
