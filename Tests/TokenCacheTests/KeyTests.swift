import Foundation
import TestSupport
import Testing
import TokenCacheSodium

@testable import TokenCache
import TokenCacheRecords
import TokenCacheStorage

/// Security matrix K1–K5 and P2–P3: key sources, wrong keys, key-file checks.
@Suite struct KeyTests {
    @Test func aWrongKeyIsItsOwnErrorAndWritesNothing() throws {
        try TestStore.with { store, cache in
            try cache.put(Samples.account())
            let before = try Data(contentsOf: URL(fileURLWithPath: store.directory + "/data.mdb"))
            let otherKey = store.root + "/other/key"
            try KeyFile.create(at: otherKey)
            let error = try #require(throws: TokenCacheError.self) {
                try TokenStore.open(Configuration(directory: store.directory, keySource: .keyFile(path: otherKey)))
            }
            #expect(error.code == .wrongKey)
            let after = try Data(contentsOf: URL(fileURLWithPath: store.directory + "/data.mdb"))
            #expect(before == after)
        }
    }

    @Test func keyFilesThatAreNotPrivateRegular32ByteFilesAreRefused() throws {
        try withTemporaryDirectory { root in
            let good = root + "/keys/good"
            try KeyFile.create(at: good)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
            #expect(bytes.count == 32)
            #expect(try FileManager.default.attributesOfItem(atPath: good)[.posixPermissions] as? Int == 0o600)
            #expect(errorCode { try KeyFile.create(at: good) } == .keyUnavailable)  // never overwritten
            #expect(try Data(contentsOf: URL(fileURLWithPath: good)) == bytes)

            func expectRefusal(_ path: String, _ code: TokenCacheError.Code) {
                let error = #expect(throws: TokenCacheError.self) { _ = try KeyFile.read(at: path) }
                #expect(error?.code == code, "\(path): \(String(describing: error))")
                #expect(error?.message.contains(path) == true)
            }
            func write(_ name: String, _ data: Data, mode: Int = 0o600) -> String {
                let path = root + "/keys/" + name
                _ = FileManager.default.createFile(atPath: path, contents: data, attributes: [.posixPermissions: mode])
                return path
            }
            expectRefusal(write("short", bytes.prefix(31)), .keyUnavailable)
            expectRefusal(write("long", bytes + [0]), .keyUnavailable)
            expectRefusal(write("empty", Data()), .keyUnavailable)
            expectRefusal(write("group-readable", bytes, mode: 0o640), .insecurePermissions)
            expectRefusal(write("world-readable", bytes, mode: 0o604), .insecurePermissions)
            let link = root + "/keys/link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: good)
            expectRefusal(link, .insecurePermissions)
            try FileManager.default.createDirectory(atPath: root + "/keys/dir", withIntermediateDirectories: true)
            expectRefusal(root + "/keys/dir", .keyUnavailable)
            #expect(mkfifo(root + "/keys/fifo", 0o600) == 0)
            expectRefusal(root + "/keys/fifo", .keyUnavailable)
            expectRefusal(root + "/keys/missing", .keyUnavailable)
            // A directory others can write is refused even for a well-formed key file.
            try FileManager.default.createDirectory(atPath: root + "/open", withIntermediateDirectories: true)
            chmod(root + "/open", 0o777)
            let exposed = root + "/open/key"
            _ = FileManager.default.createFile(atPath: exposed, contents: bytes, attributes: [.posixPermissions: 0o600])
            expectRefusal(exposed, .insecurePermissions)
            #expect(try KeyFile.read(at: good).count == 32)
        }
    }

    @Test func aPassphraseStoreOpensWithItsPassphraseOnly() throws {
        try withTemporaryDirectory { root in
            let directory = root + "/store"
            let right = Configuration(directory: directory, keySource: .passphrase(Secret("correct horse"), origin: "test"))
            let cache = try TokenStore.create(right)
            try cache.put(Samples.account())
            #expect(try cache.info().keyProtection.contains("passphrase"))
            let reopened = try TokenStore.open(right)
            #expect(try reopened.get(Samples.account().key) != nil)
            let wrong = Configuration(directory: directory, keySource: .passphrase(Secret("wrong horse"), origin: "test"))
            #expect(errorCode { try TokenStore.open(wrong) } == .wrongKey)
            let keyFile = root + "/key"
            try KeyFile.create(at: keyFile)
            let mismatch = try #require(throws: TokenCacheError.self) {
                try TokenStore.open(Configuration(directory: directory, keySource: .keyFile(path: keyFile)))
            }
            #expect(mismatch.code == .wrongKey && mismatch.message.contains("passphrase"))
        }
    }

    @Test func tamperedPassphraseParametersAreRefusedBeforeArgon2Runs() throws {
        try withTemporaryDirectory { root in
            let store = TestStore(root: root)
            let configuration = Configuration(directory: store.directory, keySource: .passphrase(Secret("pw"), origin: "test"))
            _ = try TokenStore.create(configuration)
            let original = try #require(store.rawEntries(KeySpace.meta).first { $0.0 == FormatConstants.headerKey }?.1)
            func withMemLimit(_ memLimit: UInt64) -> [UInt8] {
                var header = try! StoreHeader.decode(original)
                header.memLimit = memLimit
                return header.encoded()  // a consistent checksum: only the floor/ceiling checks can catch it
            }
            for memLimit: UInt64 in [8 << 20, 64 << 30] {
                try store.rawPut(KeySpace.meta, key: FormatConstants.headerKey, value: withMemLimit(memLimit))
                let error = try #require(throws: TokenCacheError.self) { try TokenStore.open(configuration) }
                #expect(error.code == .keyUnavailable, "memlimit \(memLimit)")
            }
            // Within bounds but different from what the keys were wrapped with: the wrap AD catches it.
            try store.rawPut(KeySpace.meta, key: FormatConstants.headerKey, value: withMemLimit(128 << 20))
            #expect(errorCode { try TokenStore.open(configuration) } == .wrongKey)
        }
    }

    @Test func aBase64KeyFromTheEnvironmentWorksAndMalformedOnesAreNamed() throws {
        try withTemporaryDirectory { root in
            let key = Data((0..<32).map { UInt8($0) }).base64EncodedString()
            let configuration = Configuration(directory: root + "/store", keySource: .base64Key(Secret(key + "\n"), origin: "TOKEN_CACHE_KEY"))
            try TokenStore.create(configuration).put(Samples.account())
            #expect(try TokenStore.open(configuration).get(Samples.account().key) != nil)
            for bad in ["", "not base64!", Data(count: 31).base64EncodedString(), Data(count: 33).base64EncodedString(), String(key.dropLast())] {
                let error = try #require(throws: TokenCacheError.self) {
                    try TokenStore.open(Configuration(directory: root + "/store", keySource: .base64Key(Secret(bad), origin: "TOKEN_CACHE_KEY")))
                }
                #expect(error.code == .keyUnavailable)
                #expect(error.message.contains("TOKEN_CACHE_KEY"))
                #expect(bad.isEmpty || !error.message.contains(bad))
            }
        }
    }

    @Test func defaultsFollowXDGAndTheOverrides() {
        let home = ["HOME": "/home/u"]
        #expect(Configuration.defaultDirectory(environment: home) == "/home/u/.local/share/token-cache")
        #expect(Configuration.defaultKeyFilePath(environment: home) == "/home/u/.config/token-cache/key")
        let xdg = ["HOME": "/home/u", "XDG_DATA_HOME": "/d", "XDG_CONFIG_HOME": "/c"]
        #expect(Configuration.defaultDirectory(environment: xdg) == "/d/token-cache")
        #expect(Configuration.defaultKeyFilePath(environment: xdg) == "/c/token-cache/key")
        let relative = ["HOME": "/home/u", "XDG_DATA_HOME": "relative"]
        #expect(Configuration.defaultDirectory(environment: relative) == "/home/u/.local/share/token-cache")
        let explicit = ["HOME": "/home/u", "TOKEN_CACHE_DIR": "/s", "TOKEN_CACHE_KEY_FILE": "/k"]
        #expect(Configuration.defaultDirectory(environment: explicit) == "/s")
        guard case .keyFile(let path) = Configuration.defaultKeySource(environment: explicit) else { Issue.record("key file expected"); return }
        #expect(path == "/k")
        guard case .passphrase = Configuration.defaultKeySource(environment: ["TOKEN_CACHE_PASSPHRASE": "p"]) else { Issue.record("passphrase expected"); return }
        guard case .base64Key = Configuration.defaultKeySource(environment: ["TOKEN_CACHE_PASSPHRASE": "p", "TOKEN_CACHE_KEY": "k"]) else {
            Issue.record("base64 key expected"); return
        }
    }
    /// The Argon2id parameters in a header are capped by configuration (default: moderate), checked before Argon2 runs.
    @Test func passphraseCostsAboveTheConfiguredCeilingAreRefusedBeforeDerivation() throws {
        try withTemporaryDirectory { directory in
            var configuration = Configuration(directory: directory, keySource: .passphrase(Secret("correct horse"), origin: "test"))
            configuration.passphraseCost = .moderate
            _ = try TokenStore.create(configuration)

            var capped = configuration
            capped.maximumPassphraseCost = .interactive
            let started = Date()
            let refused = try #require(throws: TokenCacheError.self) { try TokenStore.open(capped) }
            #expect(refused.code == .keyUnavailable && refused.message.contains("TOKEN_CACHE_MAX_PASSPHRASE_COST"), "\(refused)")
            #expect(Date().timeIntervalSince(started) < 0.2, "the refusal ran Argon2id first")
            #expect(try TokenStore.open(configuration).info().keyProtection.contains("passphrase"))  // the default ceiling
        }
        try withTemporaryDirectory { directory in
            var configuration = Configuration(directory: directory, keySource: .passphrase(Secret("pw"), origin: "test"))
            configuration.passphraseCost = .sensitive
            let refused = try #require(throws: TokenCacheError.self) { try TokenStore.create(configuration) }
            #expect(refused.code == .keyUnavailable)
            configuration.passphraseCost = PassphraseCost(opsLimit: 5, memLimit: 1 << 30)
            configuration.maximumPassphraseCost = PassphraseCost(opsLimit: .max, memLimit: .max)  // never above sensitive
            #expect(errorCode { try TokenStore.create(configuration) } == .keyUnavailable)
        }
    }

    @Test(arguments: [("sensitive", PassphraseCost.sensitive), ("Interactive", .interactive), ("moderate", .moderate), ("huge", .moderate)])
    func theCeilingComesFromTheEnvironment(value: String, expected: PassphraseCost) {
        let configuration = Configuration.fromEnvironment(["TOKEN_CACHE_MAX_PASSPHRASE_COST": value, "HOME": "/h"])
        #expect(configuration.maximumPassphraseCost == expected)
    }
}
