import Foundation
import TestSupport
import Testing
import TokenCacheStorage
import TokenCacheLMDB

@testable import TokenCache
import TokenCacheRecords

/// Security matrix S1–S4: a damaged, moved, swapped or replayed record is detected, never returned, and
/// does not take the rest of the store down.
@Suite struct TamperTests {
    /// Stores one record of each kind plus a bystander access token; returns the raw AT entry under test.
    private func populated(_ cache: TokenStore) throws {
        try cache.write { writer in
            try writer.put(Samples.accessToken(target: "victim.scope"))
            try writer.put(Samples.accessToken(target: "bystander.scope"))
            try writer.put(Samples.refreshToken())
            try writer.put(Samples.account())
            try writer.put(Samples.appMetadata())
        }
    }

    private func victimKey(_ cache: TokenStore) -> [UInt8] {
        AccessToken.storageKey(for: Samples.accessToken(target: "victim.scope").key, index: cache.store.keyring.index)
    }

    @Test(arguments: TestBackend.allCases)
    func aFlippedBitAnywhereInAValueIsDetected(backend: TestBackend) throws {
        try TestStore.with(backend) { store, cache in
            try populated(cache)
            let key = victimKey(cache)
            let original = try #require(store.rawEntries(KeySpace.accessTokens).first { $0.0 == key }?.1)
            // Every byte position: header, key id, summary length, nonces, ciphertexts, tags.
            for position in 0..<original.count {
                var damaged = original
                damaged[position] ^= 0x01 << UInt8(position % 8)
                try store.rawPut(KeySpace.accessTokens, key: key, value: damaged)
                let error = try #require(throws: TokenCacheError.self, "byte \(position)") {
                    try cache.get(Samples.accessToken(target: "victim.scope").key)
                }
                #expect(error.code == .corruptRecord)
                #expect(error.recordFingerprint?.count == 16)
            }
            // The bystander and the other kinds still read.
            #expect(try cache.get(Samples.accessToken(target: "bystander.scope").key)?.entity.secret.reveal() == "at-secret")
            #expect(try cache.get(Samples.refreshToken().key) != nil)
            let listing = try cache.list(AccessToken.self)
            #expect(listing.records.count == 1 && listing.corrupt.count == 1)
            #expect(listing.corrupt.first?.fingerprint == cache.store.keyring.fingerprint(database: KeySpace.accessTokens.name, key: key))
        }
    }

    /// A sign-out removes the account's damaged records too, so reversing the damage afterwards brings nothing back.
    @Test(arguments: [nil, Samples.client] as [String?], TestBackend.allCases)
    func signOutRemovesDamagedRecordsSoAReversedTamperRevivesNothing(clientID: String?, backend: TestBackend) throws {
        try TestStore.with(backend) { store, cache in
            try populated(cache)
            _ = try cache.write { try $0.put(Samples.idToken()) }
            let rtKey = RefreshToken.storageKey(for: Samples.refreshToken().key, index: cache.store.keyring.index)
            let original = try #require(store.rawEntries(KeySpace.refreshTokens).first { $0.0 == rtKey }?.1)
            var damaged = original
            damaged[damaged.count - 1] ^= 0x01
            try store.rawPut(KeySpace.refreshTokens, key: rtKey, value: damaged)

            let removed = try cache.removeAccount(homeAccountID: Samples.home, clientID: clientID)
            #expect(removed.refreshTokens == 0)
            #expect(removed.accessTokens == 2 && removed.idTokens == 1 && removed.accounts == 1)
            #expect(removed.damagedRecords.map(\.kind) == [.refreshToken])
            #expect(removed.damagedRecords.first?.fingerprint == cache.store.keyring.fingerprint(database: KeySpace.refreshTokens.name, key: rtKey))
            #expect(try store.rawEntries(KeySpace.refreshTokens).isEmpty)

            // The attacker flips the byte back: there is nothing left to flip.
            #expect(try store.rawEntries(KeySpace.refreshTokens).first { $0.0 == rtKey } == nil)
            #expect(try cache.get(Samples.refreshToken().key) == nil)
            #expect(try cache.list(AppMetadata.self).records.count == 1)  // app metadata stays
        }
    }

    @Test(arguments: TestBackend.allCases)
    func truncatedAndExtendedValuesAreDetected(backend: TestBackend) throws {
        try TestStore.with(backend) { store, cache in
            try populated(cache)
            let key = victimKey(cache)
            let original = try #require(store.rawEntries(KeySpace.accessTokens).first { $0.0 == key }?.1)
            for damaged in [Array(original.prefix(1)), Array(original.dropLast()), original + [0], Array(original.prefix(9))] {
                try store.rawPut(KeySpace.accessTokens, key: key, value: damaged)
                #expect(errorCode { try cache.get(Samples.accessToken(target: "victim.scope").key) } == .corruptRecord, "\(damaged.count) bytes")
            }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aValueMovedToAFlippedKeyFailsAndTheOriginalKeyMisses(backend: TestBackend) throws {
        try TestStore.with(backend) { store, cache in
            try populated(cache)
            let key = victimKey(cache)
            let value = try #require(store.rawEntries(KeySpace.accessTokens).first { $0.0 == key }?.1)
            var flipped = key
            flipped[flipped.count - 1] ^= 0x01
            try store.rawDelete(KeySpace.accessTokens, key: key)
            try store.rawPut(KeySpace.accessTokens, key: flipped, value: value)
            #expect(try cache.get(Samples.accessToken(target: "victim.scope").key) == nil)
            let listing = try cache.list(AccessToken.self)
            #expect(listing.corrupt.count == 1)
            #expect(listing.records.allSatisfy { $0.entity.target == "bystander.scope" })
        }
    }

    @Test(arguments: TestBackend.allCases)
    func swappedRecordsFailAuthentication(backend: TestBackend) throws {
        try TestStore.with(backend) { store, cache in
            try populated(cache)
            let tokens = try store.rawEntries(KeySpace.accessTokens)
            try #require(tokens.count == 2)
            // AT ↔ AT of the same bucket.
            try store.rawPut(KeySpace.accessTokens, key: tokens[0].0, value: tokens[1].1)
            try store.rawPut(KeySpace.accessTokens, key: tokens[1].0, value: tokens[0].1)
            #expect(try cache.list(AccessToken.self).corrupt.count == 2)
            // RT value into the account database, app metadata under an account key.
            let refresh = try #require(store.rawEntries(KeySpace.refreshTokens).first)
            let account = try #require(store.rawEntries(KeySpace.accounts).first)
            let metadata = try #require(store.rawEntries(KeySpace.appMetadata).first)
            try store.rawPut(KeySpace.accounts, key: account.0, value: metadata.1)
            try store.rawPut(KeySpace.refreshTokens, key: refresh.0 + [], value: refresh.1)  // untouched control
            #expect(try cache.list(Account.self).corrupt.count == 1)
            #expect(try cache.list(RefreshToken.self).records.count == 1)
            try store.rawPut(KeySpace.appMetadata, key: metadata.0, value: refresh.1)
            #expect(try cache.list(AppMetadata.self).corrupt.count == 1)
        }
    }

    @Test func aRecordReplayedFromAnotherStoreWithTheSameKeyFileFails() throws {
        try withTemporaryDirectory { root in
            let first = TestStore(root: root + "/a")
            let second = TestStore(root: root + "/b")
            try KeyFile.create(at: first.keyFile)
            // Its mode given, not left to the umask (which a test beside this one may have lowered for a moment).
            try FileManager.default.createDirectory(atPath: root + "/b/keys", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try FileManager.default.copyItem(atPath: first.keyFile, toPath: second.keyFile)
            let cacheA = try TokenStore.create(first.configuration)
            let cacheB = try TokenStore.create(second.configuration)
            try cacheA.put(Samples.account(username: "from-a"))
            try cacheB.put(Samples.account(username: "from-b"))
            let valueA = try #require(first.rawEntries(KeySpace.accounts).first?.1)
            let keyB = try #require(second.rawEntries(KeySpace.accounts).first?.0)
            try second.rawPut(KeySpace.accounts, key: keyB, value: valueA)
            let error = try #require(throws: TokenCacheError.self) { try cacheB.get(Samples.account().key) }
            #expect(error.code == .corruptRecord)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func anUnconditionalWriteHealsACorruptRecord(backend: TestBackend) throws {
        try TestStore.with(backend) { store, cache in
            try populated(cache)
            let key = victimKey(cache)
            try store.rawPut(KeySpace.accessTokens, key: key, value: [1, 2, 3])
            let error = try #require(throws: TokenCacheError.self) {
                try cache.put(Samples.accessToken(target: "victim.scope"), expectedRevision: 1)
            }
            #expect(error.code == .conflict)
            #expect(backend.isFirst(try cache.put(Samples.accessToken(target: "victim.scope"))))
            #expect(try cache.get(Samples.accessToken(target: "victim.scope").key) != nil)
        }
    }
}

@Suite struct VerifyTests {
    @Test(arguments: TestBackend.allCases)
    func verifyCountsGoodRecordsAndNamesCorruptAndMisplacedOnes(backend: TestBackend) throws {
        try TestStore.with(backend) { store, cache in
            try cache.write { writer in
                try writer.put(Samples.accessToken())
                try writer.put(Samples.refreshToken())
                try writer.put(Samples.account())
            }
            let clean = try cache.verify()
            #expect(clean.isClean && clean.verified[.accessToken] == 1 && clean.verified[.account] == 1)

            // Damage one record; seal another validly but under a key its fields do not derive (a writer bug).
            let entry = try #require(store.rawEntries(KeySpace.refreshTokens).first)
            try store.rawPut(KeySpace.refreshTokens, key: entry.0, value: Array(entry.1.dropLast()))
            let wrongKey = Account.storageKey(for: Samples.account(realm: "elsewhere").key, index: cache.store.keyring.index)
            try cache.store.backend.write { txn in
                try cache.store.seal(Samples.account(), key: wrongKey, revision: 1, now: 0, into: txn)
            }
            let report = try cache.verify()
            #expect(!report.isClean)
            #expect(report.corrupt.map(\.kind) == [.refreshToken])
            #expect(report.misplaced.map(\.kind) == [.account])
            #expect(report.verified[.account] == 2)
        }
    }
}
