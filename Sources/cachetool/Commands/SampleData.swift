import ArgumentParser
import Foundation
import TokenCache

/// `cachetool sample-data`: realistic, obviously fake records for demos and manual testing.
struct SampleData: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sample-data",
        abstract: "Write realistic sample accounts and tokens (fake, unsigned) into an existing store."
    )

    @OptionGroup var options: StoreOptions

    @Option(help: ArgumentHelp("Current time in Unix seconds the sample expiries are relative to.", valueName: "seconds"))
    var now: Int64?

    func run() throws {
        try Failure.reporting {
            let cache = try TokenStore.open(options.configuration(readOnly: false))
            let records = SampleRecords(now: now ?? Int64(Date().timeIntervalSince1970))
            let written = try cache.write { writer in
                for account in records.accounts { try writer.put(account) }
                for token in records.accessTokens { try writer.put(token) }
                for token in records.refreshTokens { try writer.put(token) }
                for token in records.idTokens { try writer.put(token) }
                for metadata in records.appMetadata { try writer.put(metadata) }
                return records.count
            }
            print("Wrote \(written) sample records (one transaction) to \(cache.configuration.directory).")
        }
    }
}

/// Two users (one a guest in a second tenant), two public clients of which one is in the Microsoft family,
/// one confidential client's app token, and expiries spread around `now`.
struct SampleRecords {
    static let cloud = "login.microsoftonline.com"
    static let contoso = "0c2d1f7e-5b8a-4d3c-9e1f-2a4b6c8d0e1f"
    static let fabrikam = "7e9f1a3b-5c7d-4e9f-8a1b-3c5d7e9f1a3b"
    static let aliceOID = "1a2b3c4d-0000-4000-8000-a11ce0000001"
    static let bobOID = "1a2b3c4d-0000-4000-8000-b0b000000002"
    static let familyClient = "5e3ce6c0-2b1f-4285-8d4b-75ee78787346"
    static let ownClient = "8a3c9f6e-1f2b-4c3d-9e8f-5a6b7c8d9e0f"
    static let daemonClient = "c0ffee00-1234-4abc-8def-0123456789ab"

    let accounts: [Account]
    let accessTokens: [AccessToken]
    let refreshTokens: [RefreshToken]
    let idTokens: [IDToken]
    let appMetadata: [AppMetadata]

    var count: Int { accounts.count + accessTokens.count + refreshTokens.count + idTokens.count + appMetadata.count }

    init(now: Int64) {
        let cloud = Self.cloud, contoso = Self.contoso, fabrikam = Self.fabrikam
        let alice = "\(Self.aliceOID).\(contoso)", bob = "\(Self.bobOID).\(contoso)"
        func clientInfo(_ oid: String) -> String { Self.base64URL(#"{"uid":"\#(oid)","utid":"\#(contoso)"}"#) }
        accounts = [
            Account(
                homeAccountID: alice, environment: cloud, realm: contoso, localAccountID: Self.aliceOID,
                username: "alice@contoso.example", authorityType: "MSSTS", accountSource: "authorization_code",
                name: "Alice Example", clientInfo: clientInfo(Self.aliceOID)
            ),
            Account(
                homeAccountID: alice, environment: cloud, realm: fabrikam, localAccountID: "9f8e7d6c-0000-4000-8000-a11ce0guest",
                username: "alice@contoso.example", authorityType: "MSSTS", accountSource: "authorization_code",
                name: "Alice Example (guest)"
            ),
            Account(
                homeAccountID: bob, environment: cloud, realm: contoso, localAccountID: Self.bobOID,
                username: "bob@contoso.example", authorityType: "MSSTS", accountSource: "urn:ietf:params:oauth:grant-type:device_code",
                name: "Bob Example", clientInfo: clientInfo(Self.bobOID)
            ),
        ]
        func accessToken(
            _ home: String, _ client: String, _ realm: String, _ target: String, expiresIn: Int64, cachedAgo: Int64 = 600,
            refreshIn: Int64? = nil, tokenType: String? = "Bearer", keyID: String? = nil
        ) -> AccessToken {
            AccessToken(
                homeAccountID: home, environment: cloud, clientID: client, realm: realm, target: target,
                secret: Secret(Self.fakeJWT(["aud": target.split(separator: " ").first.map(String.init) ?? "", "tid": realm, "exp": "\(now + expiresIn)"])),
                cachedAt: now - cachedAgo, expiresOn: now + expiresIn, extendedExpiresOn: now + expiresIn + 3600,
                refreshOn: refreshIn.map { now + $0 }, tokenType: tokenType, keyID: keyID
            )
        }
        accessTokens = [
            accessToken(alice, Self.familyClient, contoso, "User.Read Mail.Read openid profile email", expiresIn: 53 * 60),
            accessToken(alice, Self.familyClient, fabrikam, "https://management.azure.com/user_impersonation", expiresIn: -2 * 3600, cachedAgo: 5 * 3600),
            accessToken(bob, Self.ownClient, contoso, "Files.Read.All Sites.Read.All", expiresIn: 40 * 60, cachedAgo: 3000, refreshIn: -120),
            accessToken(alice, Self.ownClient, contoso, "https://graph.microsoft.com/.default", expiresIn: 70 * 60, tokenType: "pop", keyID: "pop-key-7c1a"),
            accessToken("", Self.daemonClient, contoso, "https://graph.microsoft.com/.default", expiresIn: 59 * 60, cachedAgo: 60),
        ]
        refreshTokens = [
            RefreshToken(homeAccountID: alice, environment: cloud, clientID: Self.familyClient, secret: Secret(Self.fakeOpaque("rt-family")), familyID: "1", lastModificationTime: now - 600),
            RefreshToken(homeAccountID: bob, environment: cloud, clientID: Self.ownClient, secret: Secret(Self.fakeOpaque("rt-bob")), target: "Files.Read.All Sites.Read.All offline_access", lastModificationTime: now - 3000),
            RefreshToken(homeAccountID: alice, environment: cloud, clientID: Self.ownClient, secret: Secret(Self.fakeOpaque("rt-alice")), lastModificationTime: now - 86_400),
        ]
        idTokens = [
            IDToken(homeAccountID: alice, environment: cloud, clientID: Self.familyClient, realm: contoso, secret: Secret(Self.fakeJWT(["oid": Self.aliceOID, "tid": contoso, "preferred_username": "alice@contoso.example"]))),
            IDToken(homeAccountID: alice, environment: cloud, clientID: Self.familyClient, realm: fabrikam, secret: Secret(Self.fakeJWT(["oid": "guest", "tid": fabrikam, "preferred_username": "alice@contoso.example"]))),
            IDToken(homeAccountID: bob, environment: cloud, clientID: Self.ownClient, realm: contoso, secret: Secret(Self.fakeJWT(["oid": Self.bobOID, "tid": contoso, "preferred_username": "bob@contoso.example"]))),
        ]
        appMetadata = [
            AppMetadata(clientID: Self.familyClient, environment: cloud, familyID: "1"),
            AppMetadata(clientID: Self.ownClient, environment: cloud),
            AppMetadata(clientID: Self.daemonClient, environment: cloud),
        ]
    }

    static func base64URL(_ text: String) -> String { base64URL(Data(text.utf8)) }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// An unsigned JWT-shaped string with random padding so sizes resemble real tokens (1–2 KB).
    static func fakeJWT(_ claims: [String: String]) -> String {
        var payload = claims
        payload["iss"] = "https://sample.invalid/"
        payload["note"] = "cachetool sample data, not a real token"
        let json = (try? JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys])) ?? Data()
        let signature = Data((0..<256).map { _ in UInt8.random(in: 0...255) })
        return base64URL(#"{"alg":"none","typ":"JWT"}"#) + "." + base64URL(json) + "." + base64URL(signature)
    }

    static func fakeOpaque(_ label: String) -> String {
        "0.sample-\(label)." + base64URL(Data((0..<600).map { _ in UInt8.random(in: 0...255) }))
    }
}
