import Foundation
import TestSupport
import Testing
import TokenCache
import TokenCacheRecords
import TokenCacheStorage

@Suite struct CacheToolTests {
    static let now = ReferenceTime.now

    @Test func initUnderUmask000CreatesAPrivateKeyFileAndStore() throws {
        try CLIStore.with { store in
            let run = try store.run(["init"], shell: "umask 000")
            #expect(run.status == 0, "\(run.output)")
            #expect(run.stdout.contains("Created key file") && run.stdout.contains("Created store") && run.stdout.contains("(format v4, aes-256-gcm)"))
            #expect(try store.mode(store.keyFile) == 0o600)
            #expect(try store.mode(store.root + "/config") == 0o700)
            #expect(try store.mode(store.directory) == 0o700)
            #expect(try store.mode(store.directory + "/data.mdb") == 0o600)
            #expect(try store.mode(store.directory + "/lock.mdb") == 0o600)
            #expect(try Data(contentsOf: URL(fileURLWithPath: store.keyFile)).count == 32)
            // Again: only checks.
            let again = try store.run(["init"])
            #expect(again.status == 0 && again.stdout.contains("already exists and opens"))
        }
    }

    @Test func initNeverMakesAKeyForAStoreThatExists() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            try FileManager.default.removeItem(atPath: store.keyFile)
            let run = try store.run(["init"])
            #expect(run.status == 66, "\(run.output)")
            #expect(run.stderr.contains("exists, but its key file") && run.stderr.contains("backup"), "\(run.stderr)")
            #expect(!run.stdout.contains("Created key file"))
            #expect(!FileManager.default.fileExists(atPath: store.keyFile), "init made a key that cannot open the store")
            // Any other verb says the same, not "create one with init".
            let inspect = try store.run(["inspect"])
            #expect(inspect.status == 66 && inspect.stderr.contains("exists, but its key file") && !inspect.stderr.contains("cachetool init`)"))
        }
    }

    /// An older build's first run without a key left the store directory and an empty data file with no header.
    @Test func initCompletesAStoreWhoseCreationWasInterrupted() throws {
        try CLIStore.with { store in
            try FileManager.default.createDirectory(atPath: store.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let options = LMDBRecordBackend.Options(
                directory: store.directory, initialMapSize: 1 << 20, maximumMapSize: 1 << 24, readOnly: false, allowNetworkFilesystem: false
            )
            _ = try LMDBRecordBackend.open(options)
            let before = try store.run(["inspect"])
            #expect(before.status == 66 && before.stderr.contains("interrupted") && before.stderr.contains("cachetool init"), "\(before.output)")
            let run = try store.run(["init"])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.stdout.contains("Created key file") && run.stdout.contains("Completed the store"), "\(run.stdout)")
            #expect(try store.run(["sample-data"]).status == 0)
            #expect(try store.run(["inspect"]).status == 0)
        }
    }

    @Test func inspectShowsARedactedTableWithRelativeExpiry() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let seeded = try store.run(["sample-data", "--now", "\(Self.now)"])
            #expect(seeded.status == 0, "\(seeded.output)")
            let run = try store.run(["inspect", "--now", "\(Self.now)"])
            #expect(run.status == 0, "\(run.output)")
            for column in ["KIND", "CLIENT", "TENANT", "EXPIRES", "SCOPES"] {
                #expect(run.stdout.contains(column))
            }
            #expect(run.stdout.contains("in 53 min"))
            #expect(run.stdout.contains("expired 2 h ago"))
            #expect(run.stdout.contains("in 40 min, refresh due"))
            #expect(run.stdout.contains("alice@contoso.example  home tenant"))
            #expect(run.stdout.contains("\n  pop "))
            #expect(run.stdout.contains("family 1"))
            #expect(!run.stdout.contains("SECRET"))
            #expect(!run.stdout.contains("eyJ"))  // no token text
            let lines = run.stdout.split(separator: "\n")
            #expect(lines.first?.contains("17 records") == true, "\(lines.first ?? "")")
        }
    }

    @Test func inspectJSONHasStableKeysAndRedactsUnlessAsked() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data", "--now", "\(Self.now)"]).status == 0)
            let run = try store.run(["inspect", "--json", "--now", "\(Self.now)"])
            #expect(run.status == 0)
            let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            for key in ["store", "now", "accounts", "access_tokens", "refresh_tokens", "id_tokens", "app_metadata", "corrupt_records"] {
                #expect(json[key] != nil, "missing \(key)")
            }
            let tokens = try #require(json["access_tokens"] as? [[String: Any]])
            #expect(tokens.count == 5)
            #expect(tokens.allSatisfy { $0["secret"] as? String == Secret.redactionMarker })
            #expect(tokens.allSatisfy { $0["expires_on"] is Int && $0["fingerprint"] is String && $0["revision"] is Int })
            let revealed = try store.run(["inspect", "--json", "--reveal-secrets"])
            let revealedJSON = try #require(try JSONSerialization.jsonObject(with: Data(revealed.stdout.utf8)) as? [String: Any])
            let secrets = try #require(revealedJSON["access_tokens"] as? [[String: Any]]).compactMap { $0["secret"] as? String }
            #expect(secrets.count == 5 && secrets.allSatisfy { $0.hasPrefix("eyJ") })
        }
    }

    @Test func canarySecretsNeverReachOutputUnlessRevealed() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let secret = "CANARY-CLI-SECRET-4b1d9e"
            let cache = try TokenStore.open(store.configuration)
            try cache.write { writer in
                try writer.put(AccessToken(homeAccountID: "h.t", environment: "login.microsoftonline.com", clientID: "c", realm: "t", target: "s", secret: Secret(secret), cachedAt: 1, expiresOn: 2))
                try writer.put(RefreshToken(homeAccountID: "h.t", environment: "login.microsoftonline.com", clientID: "c", secret: Secret(secret)))
                try writer.put(IDToken(homeAccountID: "h.t", environment: "login.microsoftonline.com", clientID: "c", realm: "t", secret: Secret(secret)))
            }
            let base64 = Data(secret.utf8).base64EncodedString()
            for arguments in [["inspect"], ["inspect", "--json"], ["info"], ["info", "--json"], ["inspect", "--account", "h.t"], ["inspect", "--bogus"]] {
                let run = try store.run(arguments)
                #expect(!run.output.contains(secret) && !run.output.contains(base64), "\(arguments)")
            }
            // The same command with the explicit flag shows it: the check above can fail.
            #expect(try store.run(["inspect", "--reveal-secrets"]).stdout.contains(secret))
        }
    }

    @Test func errorsHaveStableExitCodesAndClearMessages() throws {
        try CLIStore.with { store in
            let missing = try store.run(["inspect"])
            #expect(missing.status == 66 && missing.stderr.contains("storeNotFound") && missing.stderr.contains("cachetool init"))
            #expect(try store.run(["init"]).status == 0)
            let otherKey = store.root + "/other-key"
            try TokenStore.KeyFileFixture.make(otherKey)
            let wrong = try store.run(["inspect", "--key-file", otherKey])
            #expect(wrong.status == 77 && wrong.stderr.contains("wrongKey"), "\(wrong.output)")
            chmod(store.keyFile, 0o644)
            let loose = try store.run(["inspect"])
            #expect(loose.status == 77 && loose.stderr.contains("chmod 600"), "\(loose.output)")
            chmod(store.keyFile, 0o600)
            let usage = try store.run(["inspect", "--no-such-flag"])
            #expect(usage.status == 64)
            let badEnvKey = try store.run(["inspect"], extra: ["TOKEN_CACHE_KEY": "short"])
            #expect(badEnvKey.status == 66 && badEnvKey.stderr.contains("TOKEN_CACHE_KEY") && !badEnvKey.stderr.contains("short"))
        }
    }

    @Test func aPassphraseFromTheEnvironmentProtectsTheStore() throws {
        try CLIStore.with { store in
            let passphrase = ["TOKEN_CACHE_PASSPHRASE": "correct horse battery staple"]
            let created = try store.run(["init"], extra: passphrase)
            #expect(created.status == 0 && !created.stdout.contains("Created key file"), "\(created.output)")
            #expect(!FileManager.default.fileExists(atPath: store.keyFile))
            #expect(try store.run(["info"], extra: passphrase).stdout.contains("passphrase"))
            let wrong = try store.run(["info"], extra: ["TOKEN_CACHE_PASSPHRASE": "wrong"])
            #expect(wrong.status == 77)
        }
    }
}

extension TokenStore {
    /// Test helper: a valid key file at `path` for another key.
    enum KeyFileFixture {
        static func make(_ path: String) throws { try KeyFile.create(at: path) }
    }
}
