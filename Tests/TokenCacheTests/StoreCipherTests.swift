import Foundation
import TestSupport
import Testing
import TokenCacheRecords
import TokenCacheSodium
import TokenCacheStorage

@testable import TokenCache
@testable import TokenCacheOperations

/// The cipher a store seals with (FORMAT.md §6.1): chosen at creation, named per data key, converted by a rotation,
/// moved to on the upgrade from format version 2, and refused clearly where the machine cannot run it.
@Suite struct StoreCipherTests {
    /// The cipher each stored record of the store is sealed with, by its data key's id.
    static func ciphersOfRecords(_ store: TestStore, _ cache: TokenStore) throws -> [RecordCipher: Int] {
        let keyring = try store.openReadOnly().store.keyring
        var counts: [RecordCipher: Int] = [:]
        for space in [KeySpace.accessTokens, .refreshTokens, .idTokens, .accounts, .appMetadata] {
            for (_, value) in try store.rawEntries(space) {
                let id = try #require(value.withUnsafeBytes { RecordEnvelope.keyID(of: $0) })
                counts[try #require(keyring.recordKey(id)).cipher, default: 0] += 1
            }
        }
        return counts
    }

    @Test func aNewStoreSealsWithTheConfiguredCipherOrTheMachinesPreferredOne() throws {
        try TestStore.with { store, cache in
            #expect(try cache.info().cipher == .preferred && StoreCipher.preferred == .aes256GCM)
            try DataKeyRotationTests.populate(cache)
            #expect(try Self.ciphersOfRecords(store, cache) == [.aes256GCM: 63])
        }
        try TestStore.with(cipher: .xchacha20Poly1305) { store, cache in
            #expect(try cache.info().cipher == .xchacha20Poly1305)
            try DataKeyRotationTests.populate(cache)
            #expect(try Self.ciphersOfRecords(store, cache) == [.xchacha20Poly1305: 63])
            // The configuration's cipher is for creation and upgrade only: an open with another keeps the store's.
            var other = store.configuration
            other.cipher = .aes256GCM
            let reopened = try TokenStore.open(other)
            try reopened.put(Samples.accessToken(home: "late.utid"))
            #expect(try reopened.info().cipher == .xchacha20Poly1305 && Self.ciphersOfRecords(store, cache) == [.xchacha20Poly1305: 64])
        }
    }

    /// A rotation converts every record to the other cipher, and back, in a directory and on a shared store; nothing
    /// reads differently, and a handle opened before reads records of both ciphers. Its last step relabels the first
    /// data key (kept for the blind index, sealing nothing) with the new cipher, so a store converted to
    /// XChaCha20-Poly1305 names no other and opens on a machine without AES-NI.
    @Test(arguments: [TestBackend.lmdb, .postgresql])
    func aRotationConvertsTheStoreBetweenCiphersAndBack(backend: TestBackend) throws {
        try TestStore.with(backend) { store, cache in
            try DataKeyRotationTests.populate(cache)
            let before = try cache.snapshot()
            let first = try cache.info().cipher
            // A store of files starts with the machine's preferred cipher, a shared store with the portable one.
            #expect(first == (backend == .lmdb ? .preferred : .xchacha20Poly1305))
            let other: StoreCipher = first == .aes256GCM ? .xchacha20Poly1305 : .aes256GCM
            let converted = try cache.rotateDataKey(to: other)
            #expect(converted.cipher == other && converted.resealed == 65 && converted.damaged == 0)
            let reopened = try TokenStore.open(store.configuration)
            #expect(try reopened.info().cipher == other)
            #expect(reopened.store.keyring.header.wrappedKeys.map(\.cipher) == [other.recordCipher, other.recordCipher])
            #expect(try reopened.snapshot().accessTokens.map(\.entity) == before.accessTokens.map(\.entity))
            if backend == .lmdb { #expect(try Self.ciphersOfRecords(store, cache) == [other.recordCipher: 63]) }
            // The handle opened before the rotation reads the converted records and writes under the new key.
            #expect(try cache.snapshot().refreshTokens.map(\.entity) == before.refreshTokens.map(\.entity))
            try cache.put(Samples.accessToken(home: "late.utid"))

            let back = try reopened.rotateDataKey(to: first)
            #expect(back.cipher == first && back.resealed == 66 && back.retiredKeyIDs == [2])
            let again = try TokenStore.open(store.configuration)
            #expect(try again.info().cipher == first && again.verify().isClean)
            #expect(again.store.keyring.header.wrappedKeys.map(\.cipher) == [first.recordCipher, first.recordCipher])
            #expect(try again.snapshot().idTokens.map(\.entity) == before.idTokens.map(\.entity))
            if backend == .lmdb { #expect(try Self.ciphersOfRecords(store, cache) == [first.recordCipher: 64]) }
        }
    }

    /// Created with AES-256-GCM and converted: the store opens where AES-256-GCM does not run, and reads and writes.
    @Test func aStoreConvertedToXChaChaOpensWithoutAESNI() throws {
        try TestStore.with(cipher: .aes256GCM) { store, cache in
            try cache.put(Samples.accessToken(secret: "kept"))
            AES256GCM.$availabilityOverride.withValue(false) {
                #expect(errorCode { try TokenStore.open(store.configuration) } == .unsupportedEnvironment)
            }
            try cache.rotateDataKey(to: .xchacha20Poly1305)
            try AES256GCM.$availabilityOverride.withValue(false) {
                let portable = try TokenStore.open(store.configuration)
                #expect(try portable.get(Samples.accessToken().key)?.entity.secret.reveal() == "kept")
                try portable.put(Samples.refreshToken())
                #expect(try portable.verify().isClean)
            }
        }
    }

    /// A rotation under way to one cipher, asked for the other: the first is finished, then the store is converted.
    @Test func aRotationAskedForTheOtherCipherFinishesTheOneUnderWayFirst() throws {
        try TestStore.with(cipher: .aes256GCM) { store, cache in
            try cache.write { writer in
                for index in 0..<(RecordStore.rotationBatch + 10) { try writer.put(Samples.accessToken(home: "u\(index).utid", secret: "at-\(index)")) }
            }
            _ = try cache.store.beginRotation(to: .aes256GCM, root: try KeyFile.read(at: store.keyFile), now: 1_800_000_000)
            var stopping = store.configuration
            stopping.finishesRotation = false
            let report = try TokenStore.open(stopping).rotateDataKey(to: .xchacha20Poly1305)
            #expect(report.resumed && report.cipher == .xchacha20Poly1305 && report.activeKeyID == 3)
            #expect(report.resealed == 2 * (RecordStore.rotationBatch + 10))
            let verified = try TokenStore.open(store.configuration).verify()
            #expect(verified.isClean && verified.recordsByDataKey == [3: RecordStore.rotationBatch + 10] && verified.dataKeyIDs == [1, 3])
        }
    }

    /// Writes that store a header built from their own keyring (a change of root key, a rotation) refuse a header
    /// another handle changed since, instead of writing back a key list without its new data key.
    @Test func aHeaderWriteFromAStaleHandleIsRefusedAndLosesNothing() throws {
        try TestStore.with { store, cache in
            try cache.put(Samples.accessToken(secret: "kept"))
            try TokenStore.open(store.configuration).rotateDataKey()
            try withTemporaryDirectory { root in
                let error = #expect(throws: TokenCacheError.self) { try cache.changeRootKey(to: .keyFile(path: root + "/new-key")) }
                #expect(error?.code == .conflict || error?.code == .keyUnavailable)
                try KeyFile.create(at: root + "/new-key")
                #expect(errorCode { try cache.changeRootKey(to: .keyFile(path: root + "/new-key")) } == .conflict)
            }
            // The stale handle rotating again is refused too, the store unchanged: key 2 active, the token readable.
            #expect(errorCode { try cache.store.beginRotation(to: .aes256GCM, root: try KeyFile.read(at: store.keyFile), now: 1_800_000_000) } == .conflict)
            let reopened = try TokenStore.open(store.configuration)
            #expect(try reopened.store.keyring.keyIDs == [1, 2] && reopened.verify().isClean)
            #expect(try reopened.get(Samples.accessToken().key)?.entity.secret.reveal() == "kept")
        }
    }

    /// A rotation a kill stopped half way is finished by the next writable open (not only by `rotateDataKey`), and a
    /// read-only open leaves it as it is.
    @Test func aWritableOpenFinishesARotationLeftUnderWay() throws {
        try TestStore.with { store, cache in
            try cache.write { writer in
                for index in 0..<(RecordStore.rotationBatch + 10) { try writer.put(Samples.accessToken(home: "u\(index).utid", secret: "at-\(index)")) }
            }
            let root = try KeyFile.read(at: store.keyFile)
            _ = try cache.store.beginRotation(to: .xchacha20Poly1305, root: root, now: 1_800_000_000)
            var stopping = store.configuration
            stopping.finishesRotation = false
            let working = try TokenStore.open(stopping)
            let step = try working.store.backend.write { txn in try working.store.rotationStep(in: txn) }
            #expect(step.resealed > 1_000 && !step.finished)

            #expect(try store.openReadOnly().verify().dataKeyRotationPending)
            #expect(try store.openReadOnly().info().dataKeyRotationPending)
            let opened = try TokenStore.open(store.configuration)
            #expect(try !opened.info().dataKeyRotationPending)
            let report = try opened.verify()
            #expect(report.isClean && !report.dataKeyRotationPending && report.recordsByDataKey == [2: RecordStore.rotationBatch + 10])
            #expect(report.dataKeyIDs == [1, 2])
            #expect(try opened.info().cipher == .xchacha20Poly1305)
            #expect(try opened.get(Samples.accessToken(home: "u5.utid").key)?.entity.secret.reveal() == "at-5")
        }
    }

    /// A store of format version 2 (XChaCha20-Poly1305, no cipher byte) reads as it is when opened read-only; the first
    /// writable open makes it version 4 and re-seals every record with the configured cipher (kept or converted: a store
    /// in a directory is re-sealed either way, its bodies in schema 2), nothing read differently.
    @Test(arguments: [StoreCipher.aes256GCM, .xchacha20Poly1305])
    func aVersion2StoreIsUpgradedToVersion4AndTheConfiguredCipher(cipher: StoreCipher) throws {
        try TestStore.with(cipher: .xchacha20Poly1305) { store, cache in
            try DataKeyRotationTests.populate(cache)
            let before = try DataKeyRotationTests.contents(store.configuration)
            try AccessTokenPlacementTests.setHeaderVersion(2, store, cache)

            let old = try store.openReadOnly()
            #expect(try old.info().readVersion == 2 && old.info().cipher == .xchacha20Poly1305)
            DataKeyRotationTests.expectSame(try DataKeyRotationTests.contents(store.configuration), before)

            var configuration = store.configuration
            configuration.cipher = cipher
            let upgraded = try TokenStore.open(configuration)
            let info = try upgraded.info()
            #expect(info.readVersion == 4 && info.writeVersion == 4 && info.cipher == cipher)
            let report = try upgraded.verify()
            #expect(report.isClean && !report.dataKeyRotationPending)
            #expect(report.recordsByDataKey == [2: 65])
            #expect(try Self.ciphersOfRecords(store, cache) == [cipher.recordCipher: 63])
            DataKeyRotationTests.expectSame(try DataKeyRotationTests.contents(store.configuration), before)
            #expect(try upgraded.silentLookup(SilentLookupQuery(
                clientID: Samples.client, homeAccountID: "u3.utid", environment: Samples.environment, realm: "utid1",
                scopes: ["User.Read"], now: Samples.now
            )).accessToken?.entity.secret.reveal() == "at-3")
        }
    }

    /// Asked to convert to a cipher this machine cannot run, the upgrade writes nothing: the store stays version 2.
    @Test func anUpgradeToACipherThisMachineCannotRunWritesNothing() throws {
        try TestStore.with(cipher: .xchacha20Poly1305) { store, cache in
            try cache.put(Samples.accessToken())
            try AccessTokenPlacementTests.setHeaderVersion(2, store, cache)
            let before = try store.rawEntries(KeySpace.meta)
            var configuration = store.configuration
            configuration.cipher = .aes256GCM
            try AES256GCM.$availabilityOverride.withValue(false) {
                #expect(errorCode { try TokenStore.open(configuration) } == .unsupportedEnvironment)
                #expect(try store.rawEntries(KeySpace.meta).map(\.1) == before.map(\.1))
                // Left to choose, it keeps XChaCha20-Poly1305 and upgrades the header alone.
                configuration.cipher = nil
                let upgraded = try TokenStore.open(configuration)
                #expect(try upgraded.info().readVersion == 4 && upgraded.info().cipher == .xchacha20Poly1305)
            }
        }
    }

    /// On a machine without AES-NI: an AES-256-GCM store is refused as an unsupported environment, before any key is
    /// tried (a wrong key too), never as a wrong key or damage; creating one is refused; the preferred cipher is
    /// XChaCha20-Poly1305; an XChaCha20-Poly1305 store works; converting one to AES-256-GCM is refused.
    @Test func aMachineWithoutTheCipherRefusesTheStoreAsAnUnsupportedEnvironment() throws {
        try TestStore.with { store, cache in
            try cache.put(Samples.accessToken())
            AES256GCM.$availabilityOverride.withValue(false) {
                #expect(StoreCipher.preferred == .xchacha20Poly1305 && !StoreCipher.aes256GCM.isAvailable)
                let refused = #expect(throws: TokenCacheError.self) { try TokenStore.open(store.configuration) }
                #expect(refused?.code == .unsupportedEnvironment)
                #expect(refused?.message.contains("aes-256-gcm") == true && refused?.message.contains("rekey --rotate-data-key --cipher xchacha20-poly1305") == true)
                #expect(errorCode { try store.openReadOnly() } == .unsupportedEnvironment)
                var wrongKey = store.configuration
                wrongKey.keySource = .base64Key(Secret(String(repeating: "A", count: 43) + "="), origin: "test")
                #expect(errorCode { try TokenStore.open(wrongKey) } == .unsupportedEnvironment)
            }
            try withTemporaryDirectory { root in
                try KeyFile.create(at: root + "/key")
                var explicit = Configuration(directory: root + "/aes", keySource: .keyFile(path: root + "/key"))
                explicit.cipher = .aes256GCM
                try AES256GCM.$availabilityOverride.withValue(false) {
                    #expect(errorCode { try TokenStore.create(explicit) } == .unsupportedEnvironment)
                    var portable = explicit
                    portable.directory = root + "/portable"
                    portable.cipher = nil
                    let created = try TokenStore.create(portable)
                    #expect(try created.info().cipher == .xchacha20Poly1305)
                    try created.put(Samples.accessToken())
                    #expect(try created.get(Samples.accessToken().key) != nil)
                    #expect(errorCode { try created.rotateDataKey(to: .aes256GCM) } == .unsupportedEnvironment)
                }
            }
        }
    }
}
