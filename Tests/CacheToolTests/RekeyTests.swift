import Foundation
import Testing
import TokenCache

/// `cachetool rekey`: after it, only the new key opens the store and every record reads the same; with the wrong
/// current key nothing changes.
@Suite struct RekeyTests {
    static func dump(_ store: CLIStore, _ extra: [String: String] = [:], keyFile: String? = nil) throws -> CacheToolRun {
        try store.run(["inspect", "--json", "--reveal-secrets", "--now", "\(CacheToolTests.now)"] + (keyFile.map { ["--key-file", $0] } ?? []), extra: extra)
    }

    @Test func aNewKeyFileReplacesTheOldOne() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let before = try Self.dump(store)
            let newKey = store.root + "/config/new-key"
            let run = try store.run(["rekey", "--new-key-file", newKey, "--json"])
            #expect(run.status == 0, "\(run.output)")
            #expect(try store.mode(newKey) == 0o600)
            // The old key no longer opens the store (77, wrong key); the new one shows every record as it was.
            let old = try store.run(["info"])
            #expect(old.status == 77 && old.stderr.contains("wrongKey"), "\(old.output)")
            let after = try Self.dump(store, keyFile: newKey)
            #expect(after.status == 0 && after.stdout == before.stdout)
            #expect(try store.run(["verify", "--key-file", newKey]).status == 0)
        }
    }

    @Test func theWrongCurrentKeyChangesNothing() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let wrong = store.root + "/wrong-key"
            try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: wrong))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: wrong)
            let newKey = store.root + "/new-key"
            let run = try store.run(["rekey", "--key-file", wrong, "--new-key-file", newKey])
            #expect(run.status == 77, "\(run.output)")
            #expect(!FileManager.default.fileExists(atPath: newKey), "no key file is left behind")
            #expect(try store.run(["info"]).status == 0, "the current key still opens the store")
        }
    }

    @Test func aPassphraseAndBackToAKeyFile() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let before = try Self.dump(store)
            let toPassphrase = try store.run(["rekey", "--new-passphrase"], extra: ["TOKEN_CACHE_NEW_PASSPHRASE": "correct horse battery staple"])
            #expect(toPassphrase.status == 0 && !toPassphrase.output.contains("correct horse"), "\(toPassphrase.output)")
            #expect(try store.run(["info"]).status == 77)
            let passphrase = ["TOKEN_CACHE_PASSPHRASE": "correct horse battery staple", "TOKEN_CACHE_KEY_FILE": ""]
            #expect(try CacheTool.run(["inspect", "--json", "--reveal-secrets", "--now", "\(CacheToolTests.now)", "--store", store.directory], environment: passphrase).stdout == before.stdout)
            #expect(try CacheTool.run(["info", "--store", store.directory], environment: ["TOKEN_CACHE_PASSPHRASE": "wrong"]).status == 77)
            let back = store.root + "/back-key"
            let toKey = try CacheTool.run(["rekey", "--store", store.directory, "--new-key-file", back], environment: passphrase)
            #expect(toKey.status == 0, "\(toKey.output)")
            #expect(try Self.dump(store, keyFile: back).stdout == before.stdout)
        }
    }

    @Test(arguments: [
        (["rekey"], "exactly one of --new-key-file, --new-passphrase and --rotate-data-key"),
        (["rekey", "--new-passphrase"], "TOKEN_CACHE_NEW_PASSPHRASE"),
        (["rekey", "--new-key-file", "/x", "--new-passphrase"], "exactly one of"),
    ] as [([String], String)])
    func usageErrors(arguments: [String], message: String) throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let run = try store.run(arguments)
            #expect(run.status == 64 && run.stderr.contains(message), "\(run.output)")
        }
    }

    @Test func theCurrentKeyFileIsNotANewKey() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let run = try store.run(["rekey", "--new-key-file", store.keyFile])
            #expect(run.status == 64 && run.stderr.contains("is the current key file"), "\(run.output)")
            #expect(try store.run(["info"]).status == 0)
        }
    }

    /// A handle open during the rekey keeps reading and writing with the data keys it holds; opened again, it needs the
    /// new key, which reads what it wrote.
    @Test func anOpenHandleReadsAndWritesOn() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let holder = try TokenStore.open(store.configuration)
            let newKey = store.root + "/config/new-key"
            #expect(try store.run(["rekey", "--new-key-file", newKey]).status == 0)
            #expect(try holder.list(Account.self).records.count == 3)
            try holder.put(AppMetadata(clientID: "late", environment: "login.microsoftonline.com"))
            #expect(throws: TokenCacheError.self) { try TokenStore.open(store.configuration) }
            let reopened = try TokenStore.open(Configuration(directory: store.directory, keySource: .keyFile(path: newKey)))
            #expect(try reopened.list(AppMetadata.self).records.map(\.entity.clientID).contains("late"))
            try reopened.put(AppMetadata(clientID: "later", environment: "login.microsoftonline.com"))
            #expect(try reopened.list(AppMetadata.self).records.count == 5)
        }
    }
}
