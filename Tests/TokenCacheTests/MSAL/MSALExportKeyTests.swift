import Foundation
import TestSupport
import Testing

@testable import TokenCache
@testable import TokenCacheMSAL

/// An export's entry keys are the ones MSAL Python's key maker derives from each entry's fields, because MSAL Python
/// modifies and removes an entry by that derived key: under any other key its sign-out and refresh-token rotation
/// miss the entry. The oracle below restates the rule of `msal/token_cache.py` (1.39.0) from its documented shape,
/// independently of ``MSALCacheKey``; `make interop` proves it against MSAL Python itself.
@Suite struct MSALExportKeyTests {
    typealias S = MSALTestSupport

    /// MSAL Python's key of an exported entry, from the entry's own fields.
    static func pythonKey(section: String, _ entry: [String: Any]) -> String {
        func field(_ name: String) -> String { entry[name] as? String ?? "" }
        switch section {
        case "AccessToken":
            return [field("home_account_id"), field("environment"), "AccessToken", field("client_id"), field("realm"), field("target")]
                .joined(separator: "-").lowercased()
        case "RefreshToken":
            return [field("home_account_id"), field("environment"), "RefreshToken", field("client_id"), "", field("target")]
                .joined(separator: "-").lowercased()
        case "IdToken":
            return [field("home_account_id"), field("environment"), "IdToken", field("client_id"), field("realm"), ""]
                .joined(separator: "-").lowercased()
        case "Account":
            return [field("home_account_id"), field("environment"), field("realm")].joined(separator: "-").lowercased()
        default:
            return "appmetadata-\(field("environment"))-\(field("client_id"))"
        }
    }

    /// The entries of an export whose key is not MSAL Python's, as "section: key" (identifiers of fixtures only).
    static func foreignKeys(_ document: [UInt8]) throws -> [String] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(document)) as? [String: Any])
        var foreign: [String] = []
        for section in ["AccessToken", "RefreshToken", "IdToken", "Account", "AppMetadata"] {
            let entries = try #require(object[section] as? [String: [String: Any]], "section \(section)")
            for (key, entry) in entries where key != pythonKey(section: section, entry) { foreign.append("\(section): \(key)") }
        }
        return foreign.sorted()
    }

    static func export(_ content: MSALCacheContent) throws -> [UInt8] {
        try MSALCacheWriter.document(content, revealSecrets: true)
    }

    // Every kind, from every SDK's fixture: a family refresh token under its client id and target, an app metadata
    // key in the client id's own case (the Python fixture's is upper-case).
    @Test(arguments: MSALFixtures.names.filter { $0 != "objc.json" })
    func everyExportedKeyIsTheOneMSALPythonDerives(fixture: String) throws {
        let content = try S.importAll(try MSALFixtures.bytes(fixture)).content
        #expect(try Self.foreignKeys(Self.export(content)) == [])
    }

    @Test func aFamilyRefreshTokenIsKeyedByItsClientAndTarget() throws {
        let family = RefreshToken(
            homeAccountID: "uid.utid", environment: "login.microsoftonline.com", clientID: "04B07795-client", secret: Secret("RT-F"),
            familyID: "1", target: "User.Read email openid profile", lastModificationTime: 100)
        var content = MSALCacheContent()
        content.refreshTokens = [family]
        content.appMetadata = [AppMetadata(clientID: "04B07795-client", environment: "login.microsoftonline.com", familyID: "1")]
        let text = String(decoding: try Self.export(content), as: UTF8.self)
        #expect(text.contains("\"uid.utid-login.microsoftonline.com-refreshtoken-04b07795-client--user.read email openid profile\": {"))
        #expect(text.contains("\"appmetadata-login.microsoftonline.com-04B07795-client\": {"))
    }

    // MSAL Objective-C saves a family token and a copy without the family id: both derive one MSAL Python key, which
    // MSAL Python itself could never hold twice. The client's own copy keeps it, the family token takes the .NET
    // family key, and nothing is dropped.
    @Test func aFamilyTokenBesideTheClientsOwnTokenTakesTheDotNetFamilyKey() throws {
        let content = try S.importAll(try MSALFixtures.bytes("objc.json")).content
        let document = try Self.export(content)
        let foreign = try Self.foreignKeys(document)
        #expect(foreign.count == 1)
        #expect(foreign.first?.hasSuffix("-login.microsoftonline.com-refreshtoken-1--") == true)
        #expect(S.sorted(try S.importAll(document).content) == S.sorted(content))
    }
}
