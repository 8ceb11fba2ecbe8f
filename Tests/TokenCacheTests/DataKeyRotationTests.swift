import Foundation
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
            // record sealed under it), refuses to write until reopened; a new one writes under the new key.
            let stale = try cache.list(AccessToken.self)
            #expect(stale.corrupt.isEmpty && stale.records.count == 30)
            #expect(try cache.get(Samples.refreshToken(home: "u7.utid").key)?.entity.secret.reveal() == "rt-7")
            #expect(errorCode { try cache.put(Samples.accessToken(home: "late.utid")) } == .conflict)
            let reopened = try TokenStore.open(store.configuration)
            try reopened.put(Samples.accessToken(home: "late.utid"))

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
            _ = try cache.store.beginRotation(root: root, now: 1_800_000_000)
            let working = try TokenStore.open(store.configuration)
            let step = try working.store.backend.write { txn in try working.store.rotationStep(in: txn) }
            #expect(step.resealed > 0 && !step.finished)

            let middle = try TokenStore.open(store.configuration).verify()
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
