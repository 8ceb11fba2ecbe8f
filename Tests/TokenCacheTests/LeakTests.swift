import Foundation
import Testing

@testable import TokenCache
import TokenCacheRecords
import TokenCacheStorage

/// Security matrix X2 and X5: no canary in any file of the store; secrets never render.
@Suite struct LeakTests {
    /// The canaries and the encodings a careless writer might use for them.
    private func forms(_ text: String) -> [String] {
        let data = Data(text.utf8)
        return [text, text.lowercased(), data.base64EncodedString(), data.map { String(format: "%02x", $0) }.joined()]
    }

    /// One record of each kind whose identifiers and secrets are the canaries.
    static func putCanaries(_ cache: TokenStore) throws {
        try cache.write { writer in
            try writer.put(
                AccessToken(
                    homeAccountID: Canary.homeAccountID, environment: "login.microsoftonline.com", clientID: Canary.clientID,
                    realm: Canary.realm, target: Canary.scope, secret: Secret(Canary.secret), cachedAt: 1, expiresOn: 2
                )
            )
            try writer.put(
                RefreshToken(homeAccountID: Canary.homeAccountID, environment: "login.microsoftonline.com", clientID: Canary.clientID, secret: Secret(Canary.secret))
            )
            try writer.put(IDToken(homeAccountID: Canary.homeAccountID, environment: "e", clientID: Canary.clientID, realm: Canary.realm, secret: Secret(Canary.secret)))
            try writer.put(Account(homeAccountID: Canary.homeAccountID, environment: "e", realm: Canary.realm, username: Canary.username))
            try writer.put(AppMetadata(clientID: Canary.clientID, environment: "e"))
        }
    }

    @Test func noCanaryReachesAnyFileOfTheStore() throws {
        try TestStore.with { store, cache in
            try Self.putCanaries(cache)
            // Proves the check could fail: the canary is really stored (and readable with the key).
            #expect(try cache.list(Account.self).records.first?.entity.username == Canary.username)
            let files = try store.allFileBytes()
            #expect(files.contains { $0.0 == "data.mdb" })
            for (name, bytes) in files {
                for canary in Canary.all {
                    for form in forms(canary) {
                        #expect(!bytes.contains(form), "\(name) contains a form of \(canary)")
                    }
                }
            }
        }
    }

    @Test func secretsNeverRenderThroughDescriptionsMirrorsOrErrors() throws {
        let token = Samples.accessToken(secret: Canary.secret)
        var dumped = ""
        dump(token, to: &dumped)
        let renderings = [
            "\(token)", String(describing: token), String(reflecting: token), dumped, "\(token.secret)",
            String(reflecting: token.secret), "\(Mirror(reflecting: token.secret).children.map { $0.value })",
        ]
        for rendering in renderings {
            #expect(!rendering.contains(Canary.secret), "leaked: \(rendering.prefix(80))")
        }
        #expect(renderings.contains { $0.contains(Secret.redactionMarker) })
        #expect(token.secret.reveal() == Canary.secret)
        #expect(token.jsonObject()["secret"] == .string(Secret.redactionMarker))
        #expect(token.jsonObject(revealSecrets: true)["secret"] == .string(Canary.secret))
    }

    @Test func errorsNameRecordsByFingerprintNotByContent() throws {
        try TestStore.with { store, cache in
            let token = AccessToken(
                homeAccountID: Canary.homeAccountID, environment: "e", clientID: Canary.clientID, realm: Canary.realm,
                target: Canary.scope, secret: Secret(Canary.secret), cachedAt: 1, expiresOn: 2
            )
            try cache.put(token)
            let entry = try #require(store.rawEntries(KeySpace.accessTokens).first)
            var damaged = entry.1
            damaged[damaged.count - 1] ^= 0xFF
            try store.rawPut(KeySpace.accessTokens, key: entry.0, value: damaged)
            let error = try #require(throws: TokenCacheError.self) { try cache.get(token.key) }
            #expect(error.code == .corruptRecord)
            let fingerprint = try #require(error.recordFingerprint)
            #expect(error.description.contains(fingerprint))
            for canary in Canary.all { #expect(!error.description.contains(canary)) }
            #expect(!error.description.contains(entry.0.hex))
            let conflict = try #require(throws: TokenCacheError.self) { try cache.put(token, expectedRevision: 5) }
            #expect(conflict.code == .conflict && conflict.recordFingerprint == fingerprint)
            #expect(conflict.description.contains(fingerprint))
            for canary in Canary.all { #expect(!conflict.description.contains(canary)) }
        }
    }
}
