import Foundation
import TestSupport
import Testing

@testable import TokenCache
import TokenCacheRecords
import TokenCacheStorage

/// Opening stores: permissions, missing and damaged headers, format versions.
@Suite struct StoreFileTests {
    private func mode(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    @Test func storeDirectoryAndFilesArePrivate() throws {
        try TestStore.with { store, cache in
            try cache.put(Samples.account())
            #expect(try mode(store.directory) == 0o700)
            #expect(try mode(store.directory + "/data.mdb") == 0o600)
            #expect(try mode(store.directory + "/lock.mdb") == 0o600)
        }
    }

    @Test func loosenedStoreFilesAreRefusedWithTheFix() throws {
        try withTemporaryDirectory { root in
            let store = TestStore(root: root)
            try KeyFile.create(at: store.keyFile)
            _ = try TokenStore.create(store.configuration)
            chmod(store.directory + "/data.mdb", 0o644)
            let error = try #require(throws: TokenCacheError.self) { try TokenStore.open(store.configuration) }
            #expect(error.code == .insecurePermissions && error.message.contains("chmod 600"))
            chmod(store.directory + "/data.mdb", 0o600)
            chmod(store.directory, 0o755)
            #expect(errorCode { try TokenStore.open(store.configuration) } == .insecurePermissions)
        }
    }

    @Test func aMissingStoreIsStoreNotFoundAndCreateTwiceIsRefused() throws {
        try TestStore.with { store, _ in
            var configuration = store.configuration
            #expect(errorCode { try TokenStore.create(configuration) } == .storeAlreadyExists)
            configuration.directory = store.root + "/nowhere"
            #expect(errorCode { try TokenStore.open(configuration) } == .storeNotFound)
            #expect(!FileManager.default.fileExists(atPath: configuration.directory))
        }
    }

    @Test func aStoreWithRecordsButNoHeaderIsCorruptAndNeverCompleted() throws {
        try TestStore.with { store, cache in
            try cache.put(Samples.account())
            try store.rawDelete(KeySpace.meta, key: FormatConstants.headerKey)
            let error = try #require(throws: TokenCacheError.self) { try TokenStore.open(store.configuration) }
            #expect(error.code == .corruptStore && error.message.contains("no header") && error.message.contains("1 record but"), "\(error)")
            // Completing it would seal new records under a key beside ones no key opens.
            #expect(errorCode { try TokenStore.create(store.configuration) } == .corruptStore)
            #expect(errorCode { try TokenStore.openOrCreate(store.configuration) } == .corruptStore)
            #expect(try store.rawEntries(KeySpace.meta).isEmpty)
        }
    }

    /// What an older build left on a first run without a key: the directory and an empty data file, no header.
    @Test func anEmptyStoreWithoutHeaderIsNotFoundAndCreateCompletesIt() throws {
        try TestStore.with { store, cache in
            try store.rawDelete(KeySpace.meta, key: FormatConstants.headerKey)
            _ = cache
            let error = try #require(throws: TokenCacheError.self) { try TokenStore.open(store.configuration) }
            #expect(error.code == .storeNotFound && error.message.contains("interrupted") && error.message.contains("cachetool init"), "\(error)")
        }
        try withTemporaryDirectory { root in
            let store = TestStore(root: root)
            try KeyFile.create(at: store.keyFile)
            _ = try TokenStore.create(store.configuration)
            try store.rawDelete(KeySpace.meta, key: FormatConstants.headerKey)
            let completed = try TokenStore.openOrCreate(store.configuration)
            #expect(completed.completedInterruptedCreation)
            try completed.put(Samples.account())
            #expect(try TokenStore.open(store.configuration).list(Account.self).records.count == 1)
        }
    }

    @Test func aFirstRunWithoutItsKeyFileCreatesNothing() throws {
        try withTemporaryDirectory { root in
            let store = TestStore(root: root)
            for attempt in [{ _ = try TokenStore.openOrCreate(store.configuration) }, { _ = try TokenStore.create(store.configuration) }] {
                let error = try #require(throws: TokenCacheError.self) { try attempt() }
                #expect(error.code == .keyUnavailable, "\(error)")
                #expect(error.message.contains(store.keyFile) && error.message.contains("cachetool init") && error.message.contains("nothing was created"))
                #expect(!FileManager.default.fileExists(atPath: store.directory), "a failed first run left the store directory")
                #expect(!FileManager.default.fileExists(atPath: store.keyFile))
            }
            // A key that cannot be had for another reason leaves nothing either.
            var malformed = store.configuration
            malformed.keySource = .base64Key(Secret("not base64"), origin: "TOKEN_CACHE_KEY")
            #expect(errorCode { try TokenStore.openOrCreate(malformed) } == .keyUnavailable)
            #expect(!FileManager.default.fileExists(atPath: store.directory))
            // Once the key is in hand, the next run creates the store.
            try KeyFile.create(at: store.keyFile)
            try TokenStore.openOrCreate(store.configuration).put(Samples.account())
            #expect(try TokenStore.open(store.configuration).list(Account.self).records.count == 1)
        }
    }

    @Test func anExistingStoreWhoseKeyFileIsGoneSaysToRestoreIt() throws {
        try TestStore.with { store, cache in
            try cache.put(Samples.account())
            try FileManager.default.removeItem(atPath: store.keyFile)
            for attempt in [{ _ = try TokenStore.open(store.configuration) }, { _ = try TokenStore.openOrCreate(store.configuration) }] {
                let error = try #require(throws: TokenCacheError.self) { try attempt() }
                #expect(error.code == .keyUnavailable, "\(error)")
                #expect(error.message.contains("exists, but its key file") && error.message.contains("backup") && !error.message.contains("create one"), "\(error)")
            }
            #expect(!FileManager.default.fileExists(atPath: store.keyFile))
        }
    }

    @Test func aDamagedHeaderIsCorruptAndNotAWrongKey() throws {
        try TestStore.with { store, _ in
            let header = try #require(store.rawEntries(KeySpace.meta).first { $0.0 == FormatConstants.headerKey }?.1)
            for position in [0, 20, 70, header.count - 1] {
                var damaged = header
                damaged[position] ^= 0x40
                try store.rawPut(KeySpace.meta, key: FormatConstants.headerKey, value: damaged)
                let error = try #require(throws: TokenCacheError.self) { try TokenStore.open(store.configuration) }
                #expect(error.code == .corruptStore, "byte \(position)")
            }
            try store.rawPut(KeySpace.meta, key: FormatConstants.headerKey, value: Array(header.prefix(40)))
            #expect(errorCode { try TokenStore.open(store.configuration) } == .corruptStore)
        }
    }

    @Test func aNewerReadVersionIsRefusedAndANewerWriteVersionOpensReadOnly() throws {
        try TestStore.with { store, cache in
            try cache.put(Samples.account())
            let original = try #require(store.rawEntries(KeySpace.meta).first { $0.0 == FormatConstants.headerKey }?.1)
            var newer = try StoreHeader.decode(original)
            newer.readVersion = FormatConstants.readVersion + 1
            try store.rawPut(KeySpace.meta, key: FormatConstants.headerKey, value: newer.encoded())
            let refused = try #require(throws: TokenCacheError.self) { try TokenStore.open(store.configuration) }
            #expect(refused.code == .unsupportedFormatVersion)
            // The version check comes before any interpretation of the rest: garbage after byte 12 is irrelevant.
            try store.rawPut(KeySpace.meta, key: FormatConstants.headerKey, value: Array(newer.encoded().prefix(12)) + [9, 9, 9])
            #expect(errorCode { try TokenStore.open(store.configuration) } == .unsupportedFormatVersion)

            // A newer write version needs a consistently wrapped header: the wrap AD covers the versions.
            var writeNewer = try StoreHeader.decode(original)
            writeNewer.writeVersion = FormatConstants.writeVersion + 1
            let root = try KeyFile.read(at: store.keyFile)
            let rewrapped = try cache.store.keyring.rewrapped(as: writeNewer, root: root)
            try store.rawPut(KeySpace.meta, key: FormatConstants.headerKey, value: rewrapped.encoded())
            let readOnly = try TokenStore.open(store.configuration)
            #expect(try readOnly.info().readOnly)
            #expect(try readOnly.get(Samples.account().key) != nil)
            #expect(errorCode { try readOnly.put(Samples.account()) } == .readOnly)
        }
    }

    /// A process that has the store open must not go on writing by its own rules after a newer version upgraded
    /// the store, nor with a header that changed under it: each write transaction checks the header (FORMAT.md §7).
    @Test func aStoreOpenHereRefusesWritesOnceAnotherProcessChangedItsHeader() throws {
        try TestStore.with { store, cache in
            try cache.put(Samples.account())
            let original = try #require(store.rawEntries(KeySpace.meta).first { $0.0 == FormatConstants.headerKey }?.1)
            let token = Samples.accessToken()

            var newer = try StoreHeader.decode(original)
            newer.readVersion = FormatConstants.readVersion + 1
            try store.rawPut(KeySpace.meta, key: FormatConstants.headerKey, value: newer.encoded())
            let upgraded = try #require(throws: TokenCacheError.self) { try cache.put(token) }
            #expect(upgraded.code == .unsupportedFormatVersion && upgraded.message.contains("upgraded to format version"))
            #expect(errorCode { try cache.delete(Samples.account().key) } == .unsupportedFormatVersion)

            var rekeyed = try StoreHeader.decode(original)
            rekeyed.writeVersion = FormatConstants.writeVersion + 1
            let rewrapped = try cache.store.keyring.rewrapped(as: rekeyed, root: try KeyFile.read(at: store.keyFile))
            try store.rawPut(KeySpace.meta, key: FormatConstants.headerKey, value: rewrapped.encoded())
            #expect(errorCode { try cache.put(token) } == .conflict)
            #expect(try store.rawEntries(KeySpace.accessTokens).isEmpty)  // nothing was written
            #expect(try cache.get(Samples.account().key) != nil)  // reads go on

            try store.rawPut(KeySpace.meta, key: FormatConstants.headerKey, value: original)
            try cache.put(token)
            #expect(try cache.get(token.key) != nil)
        }
    }
}
