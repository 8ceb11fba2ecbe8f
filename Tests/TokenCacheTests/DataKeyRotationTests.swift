import Foundation
import TestSupport
import Testing
import TokenCacheStorage
import TokenCacheRecords

@testable import TokenCache
@testable import TokenCacheOperations

/// Sealing every record under a new data key: nothing read differently afterwards, the old key gone from the header
/// (but the first, which roots the blind index), readable and resumable half way, damaged records reported.
@Suite struct DataKeyRotationTests {
    /// Records of every kind, the cap and kept MSAL sections; returns a description of everything readable.
    static func populate(_ cache: TokenStore) throws {
        try cache.write { writer in
            for index in 0..<30 {
                try writer.put(Samples.accessToken(home: "u\(index).utid", secret: "at-\(index)"))
                try writer.put(Samples.refreshToken(home: "u\(index).utid", secret: "rt-\(index)"))
            }
            try writer.put(Samples.account())
            try writer.put(Samples.idToken())
            try writer.put(Samples.appMetadata())
            try writer.store.setForeignSections(["AppState": .string("kept")], now: writer.now, in: writer.writeTransaction)
        }
        try cache.setAccessTokenCap(1_000)
    }

    /// Everything readable in the store, by fingerprint: entity (secrets included: `Secret` compares its bytes),
    /// revision and write time; the kept sections and the cap.
    static func contents(_ configuration: Configuration) throws -> [String: AnyHashable] {
        var readOnly = configuration
        readOnly.readOnly = true
        let cache = try TokenStore.open(readOnly)
        let snapshot = try cache.snapshot()
        var contents: [String: AnyHashable] = [:]
        func add<E>(_ records: [StoredEntity<E>]) {
            for record in records { contents[record.fingerprint] = [AnyHashable(record.entity), record.revision, record.updatedAt] as [AnyHashable] }
        }
        add(snapshot.accounts)
        add(snapshot.accessTokens)
        add(snapshot.refreshTokens)
        add(snapshot.idTokens)
        add(snapshot.appMetadata)
        #expect(snapshot.corrupt.isEmpty)
        contents["sections"] = try cache.read { try $0.store.foreignSections(in: $0.transaction) }
        contents["cap"] = try cache.accessTokenCap()
        return contents
    }

    static func expectSame(_ now: [String: AnyHashable], _ before: [String: AnyHashable], sourceLocation: SourceLocation = #_sourceLocation) {
        let differing = before.keys.filter { now[$0] != before[$0] }.sorted()
        #expect(now.count == before.count && differing.isEmpty, "differing: \(differing.prefix(3))", sourceLocation: sourceLocation)
    }

    @Test func everyRecordMovesToTheNewKeyAndTheOldOneIsRetired() throws {
        try TestStore.with { store, cache in
            try Self.populate(cache)
            let before = try Self.contents(store.configuration)
            let sealed = 30 * 2 + 3 + 2

            let first = try cache.rotateDataKey()
            #expect(first.activeKeyID == 2 && !first.resumed && first.resealed == sealed && first.damaged == 0 && first.retiredKeyIDs.isEmpty)
            var report = try TokenStore.open(store.configuration).verify()
            #expect(report.isClean && report.dataKeyIDs == [1, 2] && report.recordsByDataKey == [2: sealed] && !report.dataKeyRotationPending)
            Self.expectSame(try Self.contents(store.configuration), before)

            // The handle opened before reads every record (it learns the new key from the header when it meets a
            // record sealed under it) and writes on, under the new key (its first write follows the header).
            let stale = try cache.list(AccessToken.self)
            #expect(stale.corrupt.isEmpty && stale.records.count == 30)
            #expect(try cache.get(Samples.refreshToken(home: "u7.utid").key)?.entity.secret.reveal() == "rt-7")
            try cache.put(Samples.accessToken(home: "late.utid"))
            let reopened = try TokenStore.open(store.configuration)

            let second = try reopened.rotateDataKey()
            #expect(second.activeKeyID == 3 && second.resealed == sealed + 1 && second.retiredKeyIDs == [2])
            #expect(try cache.list(AccessToken.self).corrupt.isEmpty && reopened.list(AccessToken.self).records.count == 31)
            report = try TokenStore.open(store.configuration).verify()
            #expect(report.isClean && report.dataKeyIDs == [1, 3] && report.recordsByDataKey == [3: sealed + 1])
            #expect(try TokenStore.open(store.configuration).store.keyring.header.wrappedKeys.map(\.keyID) == [1, 3])
        }
    }

    /// Stopped after its first re-sealing transaction (as a kill would leave it): readable throughout, every key in
    /// the header; the next call continues it.
    @Test func anUnfinishedRotationIsReadableAndTheNextCallFinishesIt() throws {
        try TestStore.with { store, cache in
            try cache.write { writer in
                for index in 0..<(RecordStore.rotationBatch * 2 + 10) { try writer.put(Samples.accessToken(home: "u\(index).utid", secret: "at-\(index)")) }
            }
            let before = try Self.contents(store.configuration)
            let root = try KeyFile.read(at: store.keyFile)
            _ = try cache.store.beginRotation(to: cache.store.keyring.activeCipher, root: root, now: 1_800_000_000)
            var stopping = store.configuration
            stopping.finishesRotation = false
            let working = try TokenStore.open(stopping)
            let step = try working.store.backend.write { txn in try working.store.rotationStep(in: txn) }
            #expect(step.resealed > 0 && !step.finished)

            let middle = try TokenStore.open(stopping).verify()
            #expect(middle.isClean && middle.dataKeyRotationPending && (middle.recordsByDataKey[1] ?? 0) > 0 && (middle.recordsByDataKey[2] ?? 0) > 0)
            Self.expectSame(try Self.contents(store.configuration), before)

            let finished = try working.rotateDataKey()
            #expect(finished.resumed && finished.activeKeyID == 2 && finished.resealed + step.resealed == RecordStore.rotationBatch * 2 + 10)
            let after = try TokenStore.open(store.configuration).verify()
            #expect(after.isClean && !after.dataKeyRotationPending && after.recordsByDataKey == [2: RecordStore.rotationBatch * 2 + 10])
        }
    }

    @Test func aDamagedRecordIsCountedAndLeftForRepair() throws {
        try TestStore.with { store, cache in
            for index in 0..<5 { try cache.put(Samples.refreshToken(home: "u\(index).utid", secret: "rt-\(index)")) }
            var (key, value) = try #require(try store.rawEntries(KeySpace.refreshTokens).first)
            value[value.count - 1] ^= 1
            try store.rawPut(KeySpace.refreshTokens, key: key, value: value)
            let report = try cache.rotateDataKey()
            #expect(report.resealed == 4 && report.damaged == 1)
            let verified = try TokenStore.open(store.configuration).verify()
            #expect(verified.corrupt.count == 1 && verified.recordsByDataKey == [2: 4, 1: 1])
        }
    }

    @Test func aReadOnlyStoreIsNotRotated() throws {
        try TestStore.with { store, cache in
            try cache.put(Samples.accessToken())
            #expect(errorCode { try store.openReadOnly().rotateDataKey() } == .readOnly)
            #expect(try cache.verify().dataKeyIDs == [1])
        }
    }
}

/// Handles opened before another handle (another process, another host of a shared store) rotated the data key or
/// changed the root key: they read every record and go on writing, sealing under the key the store seals with now,
/// without being opened again.
@Suite struct HeaderFollowingTests {
    static func withTwoHandles(_ backend: TestBackend, _ body: (TestStore, _ first: TokenStore, _ second: TokenStore) throws -> Void) throws {
        try withTemporaryDirectory { root in
            let store = TestStore(root: root, backend: backend)
            try KeyFile.create(at: store.keyFile)
            let first = try TokenStore.create(store.configuration)
            let second = try TokenStore.open(store.configuration)
            try body(store, first, second)
        }
    }

    /// The id of the data key the access token of `home` is sealed under, as stored.
    static func sealingKeyID(of home: String, in cache: TokenStore) throws -> UInt32? {
        let stored = try #require(try cache.list(AccessToken.self, filter: RecordFilter(homeAccountID: home)).records.first)
        return try cache.read { reader in
            try reader.transaction.withValue(in: KeySpace.accessTokens, forKey: stored.record.key) { $0.withUnsafeBytes { RecordEnvelope.keyID(of: $0) } }
        } ?? nil
    }

    @Test(arguments: [TestBackend.lmdb, .postgresql])
    func aHandleOpenedBeforeARotationReadsAndWritesUnderTheNewKey(backend: TestBackend) throws {
        try Self.withTwoHandles(backend) { store, first, second in
            try DataKeyRotationTests.populate(first)
            let before = try DataKeyRotationTests.contents(store.configuration)
            let rotated = try first.rotateDataKey()
            // The second handle reads everything, every record now sealed under a key it did not know.
            try second.write { try $0.put(Samples.accessToken(home: "after.rotation", secret: "written-after")) }
            #expect(try Self.sealingKeyID(of: "after.rotation", in: second) == rotated.activeKeyID)
            var now = try DataKeyRotationTests.contents(store.configuration)
            #expect(now.count == before.count + 1)
            now = now.filter { before[$0.key] != nil }
            DataKeyRotationTests.expectSame(now, before)
            // Rotated again: the key the second handle sealed under is retired once no record names it, and the
            // handle follows once more.
            let again = try first.rotateDataKey()
            try second.write { try $0.put(Samples.accessToken(home: "after.second.rotation", secret: "written-later")) }
            #expect(try Self.sealingKeyID(of: "after.second.rotation", in: second) == again.activeKeyID)
            let reopened = try TokenStore.open(store.configuration)
            #expect(try reopened.list(AccessToken.self).records.count == 32)
            #expect(try reopened.list(AccessToken.self).corrupt.isEmpty)
        }
    }

    /// Stores an access token (secret `kept`), then protects the store with a new key file through `first`; returns
    /// the configuration that opens it now.
    static func rekey(_ store: TestStore, through first: TokenStore) throws -> Configuration {
        try first.write { try $0.put(Samples.accessToken(home: "before.rekey", secret: "kept")) }
        let newKeyFile = store.root + "/keys/new-key"
        try KeyFile.create(at: newKeyFile)
        try first.changeRootKey(to: .keyFile(path: newKeyFile))
        var configuration = store.configuration
        configuration.keySource = .keyFile(path: newKeyFile)
        return configuration
    }

    @Test(arguments: [TestBackend.lmdb, .postgresql])
    func aHandleOpenedBeforeARekeyWritesOnWithTheDataKeysItHolds(backend: TestBackend) throws {
        try Self.withTwoHandles(backend) { store, first, second in
            let configuration = try Self.rekey(store, through: first)
            try second.write { try $0.put(Samples.accessToken(home: "after.rekey", secret: "written-after")) }
            let reopened = try TokenStore.open(configuration)
            let secrets = try reopened.list(AccessToken.self).records.map { $0.entity.secret.reveal() }.sorted()
            #expect(secrets == ["kept", "written-after"])
            // The old key no longer opens the store.
            #expect(throws: TokenCacheError.self) { try TokenStore.open(store.configuration) }
        }
    }

    @Test(arguments: [TestBackend.lmdb, .postgresql])
    func aHeaderTheHandleCannotFollowRefusesItsWrites(backend: TestBackend) throws {
        try Self.withTwoHandles(backend) { store, first, second in
            let configuration = try Self.rekey(store, through: first)
            _ = try TokenStore.open(configuration).rotateDataKey()
            // A new root key and a new data key: the second handle holds neither, so it must not write.
            let refused = try #require(throws: TokenCacheError.self) { try second.put(Samples.accessToken(home: "late", secret: "refused")) }
            #expect(refused.code == .conflict)
            #expect(try TokenStore.open(configuration).list(AccessToken.self).records.map { $0.entity.secret.reveal() } == ["kept"])
        }
    }
}
