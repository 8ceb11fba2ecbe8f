import Foundation
import Testing

@testable import TokenCache
import TokenCacheOperations
import TokenCacheRecords
import TokenCacheStorage

#if canImport(Glibc)
import Glibc
#endif

/// SIGKILL inside the other long operations: an MSAL import (merged in batches, or replaced in one transaction) and
/// the upgrade of a version-1 store (lone tokens placed in batches). Every time, the store verifies clean, holds
/// everything it held and what committed, and running the command again finishes the work.
@Suite struct KilledLongOperationTests {
    static let environment = "login.microsoftonline.com"

    static func accessToken(_ index: Int, prefix: String) -> AccessToken {
        AccessToken(
            homeAccountID: "u\(index % 500).t", environment: environment, clientID: "c\(index % 3)", realm: "t", target: "s\(index).read",
            secret: Secret("\(prefix)-\(index)"), cachedAt: 1_800_000_000, expiresOn: 4_000_000_000
        )
    }

    static func secrets(_ store: CLIStore) throws -> Set<String> {
        var readOnly = store.configuration
        readOnly.readOnly = true
        return Set(try TokenStore.open(readOnly).list(AccessToken.self).records.map { $0.entity.secret.reveal() })
    }

    /// An MSAL cache of `count` access tokens with secrets `prefix-<n>`, exported from a scratch store.
    static func msalFile(_ store: CLIStore, count: Int, prefix: String) throws -> String {
        let scratch = CLIStore(root: store.root + "/scratch-\(prefix)")
        try FileManager.default.createDirectory(atPath: scratch.root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        #expect(try scratch.run(["init"]).status == 0)
        let cache = try TokenStore.open(scratch.configuration)
        try cache.write { writer in for index in 0..<count { try writer.put(Self.accessToken(index, prefix: prefix)) } }
        let file = store.root + "/\(prefix).json"
        #expect(try scratch.run(["export", "--include-secrets", "-o", file]).status == 0)
        return file
    }

    @Test func aKilledMergeImportKeepsWhatCommittedAndARerunFinishes() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let file = try Self.msalFile(store, count: 6_000, prefix: "imported")
            let cache = try TokenStore.open(store.configuration)
            try cache.write { writer in for index in 0..<50 { try writer.put(Self.accessToken(100_000 + index, prefix: "before")) } }
            let before = try Self.secrets(store)
            let all = before.union((0..<6_000).map { "imported-\($0)" })
            var partial = 0
            var held = before
            for round in 0..<4 {
                try store.runKilled(["import", file], afterCommits: 1, jitter: 0.05)
                #expect(try store.run(["verify"]).status == 0, "round \(round)")
                let now = try Self.secrets(store)
                #expect(now.isSuperset(of: held) && now.isSubset(of: all), "round \(round)")
                if now != held && now != all { partial += 1 }
                held = now
                if now == all { break }
            }
            #expect(partial > 0, "no kill landed between two committed batches")
            #expect(try store.run(["import", file]).status == 0)
            #expect(try Self.secrets(store) == all)
        }
    }

    @Test func aKilledReplaceImportLeavesTheOldCacheOrTheNewOne() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let file = try Self.msalFile(store, count: 6_000, prefix: "replacement")
            let cache = try TokenStore.open(store.configuration)
            try cache.write { writer in for index in 0..<2_000 { try writer.put(Self.accessToken(100_000 + index, prefix: "old")) } }
            let old = try Self.secrets(store)
            let new = Set((0..<6_000).map { "replacement-\($0)" })
            for round in 0..<4 {
                // Killed at a random moment of the run, or a moment after its first commit (which, the replacement
                // being one transaction, is the whole of it: a replacement in several would be caught in between).
                try store.runKilled(["import", "--replace", file], afterCommits: round < 2 ? 0 : 1, jitter: round < 2 ? 0.3 : 0.02)
                #expect(try store.run(["verify"]).status == 0, "round \(round)")
                let now = try Self.secrets(store)
                #expect(now == old || now == new, "round \(round): \(now.count) tokens")
            }
            #expect(try store.run(["import", "--replace", file]).status == 0)
            #expect(try Self.secrets(store) == new)
        }
    }

    /// A version-1 store of 40,000 lone tokens (each under its entry key, as version 1 writes them) is upgraded by the
    /// first writable open, in placement transactions of 8,192 tokens; a kill between them leaves a version-2 store
    /// with the placement cursor, which reads every token and which the next writable open finishes.
    @Test func aKilledUpgradeFromVersion1LosesNothingAndTheNextWritableOpenFinishesIt() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init", "--cipher", "xchacha20-poly1305"]).status == 0)  // a version-1 header names no cipher
            let count = 40_000
            do {
                let cache = try TokenStore.open(store.configuration)
                try cache.write { writer in
                    for index in 0..<count {
                        try writer.put(AccessToken(
                            homeAccountID: "u\(index).t", environment: Self.environment, clientID: "c", realm: "t", target: "s.read",
                            secret: Secret("lone-\(index)"), cachedAt: 1_800_000_000, expiresOn: 4_000_000_000
                        ))
                    }
                }
                try Self.downgradeToVersion1(store, cache)
            }
            let all = Set((0..<count).map { "lone-\($0)" })
            var partial = 0
            for round in 0..<4 {
                // Any writable open upgrades; this one then finds nothing to purge. The first commit is the header's.
                try store.runKilled(["purge-expired"], afterCommits: 2, jitter: 0.05)
                #expect(try store.run(["verify"]).status == 0, "round \(round)")
                #expect(try Self.secrets(store) == all, "round \(round)")
                var readOnly = store.configuration
                readOnly.readOnly = true
                let unplaced = try TokenStore.open(readOnly).verify().loneTokensUnderEntryKey
                if unplaced > 0 && unplaced < count { partial += 1 }
                if unplaced == 0 { break }
            }
            #expect(partial > 0, "no kill landed between two placement transactions")
            #expect(try store.run(["purge-expired"]).status == 0)
            let reopened = try TokenStore.open(store.configuration)
            #expect(try reopened.verify().loneTokensUnderEntryKey == 0)
            #expect(try reopened.info().readVersion == FormatConstants.readVersion)
            // The upgrade also moved the store to this machine's cipher, by a rotation the kills may have cut short too.
            #expect(try !reopened.verify().dataKeyRotationPending && reopened.info().cipher == .preferred)
            #expect(try Self.secrets(store) == all)
        }
    }

    /// A data-key rotation killed between its re-sealing transactions: every record readable, every key in the header,
    /// and running it again finishes it, with every record under the new key and the old one retired.
    @Test func aKilledDataKeyRotationLosesNothingAndARerunFinishesIt() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let count = 8_000
            do {
                let cache = try TokenStore.open(store.configuration)
                try cache.write { writer in for index in 0..<count { try writer.put(Self.accessToken(index, prefix: "rotated")) } }
                _ = try cache.rotateDataKey()  // key 2 active; the next rotation retires it
            }
            let all = Set((0..<count).map { "rotated-\($0)" })
            var partial = 0
            for round in 0..<4 {
                try store.runKilled(["rekey", "--rotate-data-key"], afterCommits: 2, jitter: 0.02)
                let verify = try store.run(["verify", "--json"])
                #expect(verify.status == 0, "round \(round): \(verify.output)")
                #expect(try Self.secrets(store) == all, "round \(round)")
                let json = try #require(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any])
                if json["data_key_rotation_pending"] as? Bool == true { partial += 1 } else { break }
            }
            #expect(partial > 0, "no kill landed inside the rotation")
            let finished = try store.run(["rekey", "--rotate-data-key", "--json"])
            #expect(finished.status == 0, "\(finished.output)")
            let verify = try store.run(["verify", "--json"])
            let json = try #require(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any])
            let keys = try #require(json["data_keys"] as? [[String: Any]])
            #expect(json["data_key_rotation_pending"] as? Bool == false)
            #expect(keys.count == 2 && keys[0]["id"] as? Int == 1 && keys[0]["records"] as? Int == 0)
            #expect(keys[1]["active"] as? Bool == true && keys[1]["records"] as? Int == count)
            #expect(try Self.secrets(store) == all)
        }
    }

    /// What a version-1 writer leaves: every lone token under its entry key, header versions 1.
    static func downgradeToVersion1(_ store: CLIStore, _ cache: TokenStore) throws {
        let records = cache.store
        let lone = try records.backend.read { txn in
            var found: [([UInt8], [UInt8])] = []
            try txn.forEach(in: KeySpace.accessTokens, prefix: []) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
                if key.count == RecordStore.bucketPrefixCount, let entryKey = records.entryKey(ofTokenAt: Array(key), value: value) {
                    found.append((Array(key), entryKey))
                }
                return true
            } } }
            return found
        }
        #expect(lone.count > 30_000)
        try records.backend.write { txn in
            for (key, entryKey) in lone { _ = try records.move(KeySpace.accessTokens, from: key, to: entryKey, in: txn) }
            var header = records.keyring.header
            header.readVersion = 1
            header.writeVersion = 1
            let rewrapped = try records.keyring.rewrapped(as: header, root: try KeyFile.read(at: store.keyFile))
            try rewrapped.encoded().withUnsafeBytes { try txn.put(in: KeySpace.meta, key: FormatConstants.headerKey, value: $0) }
        }
    }
}
