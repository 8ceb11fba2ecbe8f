import Foundation
import TestSupport
import Testing
import TokenCacheStorage
import TokenCachePostgreSQL

@testable import TokenCache
import TokenCacheOperations
import TokenCacheRecords

/// The contract of the storage seam's maintenance side (`StorageLocation` and its capabilities), checked on every kind
/// of backend: what open, create, compact, quarantine, backup and salvage rely on, and how a kind that lacks a
/// capability refuses it.
@Suite struct StorageMaintenanceContractTests {
    static let space = KeySpace.accounts

    /// The location the configuration chooses for a store of `kind` under `root` (its directory made, empty, 0700).
    static func location(_ kind: TestBackend, in root: String, named name: String = "store") throws -> any StorageLocation {
        if kind == .postgresql {
            return PostgreSQLStorageLocation(address: try PostgreSQLAddress(parsing: PostgreSQLTestServer.uniqueStoreURL(name)!), timeout: PostgreSQLTestServer.timeout)
        }
        let directory = kind == .memory ? Configuration.inMemoryDirectory : root + "/" + name
        if kind == .lmdb {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        var configuration = Configuration(directory: directory, keySource: .keyFile(path: root + "/key"))
        configuration.initialMapSize = 1 << 20
        configuration.maximumMapSize = 64 << 20
        return configuration.storage
    }

    /// Puts `count` records in each of three key spaces: what a copy or a compaction must keep, entry for entry.
    static func fill(_ backend: any RecordBackend, count: Int = 50) throws {
        try backend.write { txn in
            for space in [KeySpace.meta, KeySpace.accounts, KeySpace.accessTokens] {
                for index in 0..<count {
                    try Array("\(space)-\(index)".utf8).withUnsafeBytes {
                        try txn.put(in: space, key: [UInt8(index >> 8), UInt8(index & 0xFF)], value: $0)
                    }
                }
            }
        }
    }

    /// Every key space's entries, as bytes.
    static func contents(_ backend: any RecordBackend) throws -> [String: [[UInt8]]] {
        try backend.read { reader in
            var contents: [String: [[UInt8]]] = [:]
            for space in KeySpace.allCases {
                var entries: [[UInt8]] = []
                try reader.forEach(in: space, prefix: []) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
                    entries.append(Array(key) + [0xFF] + Array(value))
                    return true
                } } }
                contents[space.name] = entries
            }
            return contents
        }
    }

    static func storageError(_ body: () throws -> Void) -> StorageError? {
        do { try body() } catch let error as StorageError { return error } catch { return nil }
        return nil
    }

    @Test(arguments: TestBackend.allCases)
    func aLocationHoldsAStoreOnlyOnceOneIsCreatedAndNamesItsFilesInItsDirectory(kind: TestBackend) throws {
        try withTemporaryDirectory { root in
            let location = try Self.location(kind, in: root)
            #expect(!location.holdsStore() && location.sizeAtRest() == nil)
            #expect(Self.storageError { _ = try location.open(readOnly: false, create: false) }?.code == .storeNotFound)
            let backend = try location.open(readOnly: false, create: true)
            try Self.fill(backend)
            let relocated = location.relocated(to: root + "/elsewhere")
            #expect(relocated.kind == location.kind && relocated.location == root + "/elsewhere")
            switch kind {
            case .lmdb:
                // A store directory: its data file says there is a store, and every file it names lies in it.
                let directory = try #require(location.directory)
                #expect(location.holdsStore())
                #expect(try #require(location.sizeAtRest()) > 0)
                #expect(location.files.filter { $0.role == .records }.count == 1)
                #expect(location.files.allSatisfy { $0.path == directory + "/" + $0.name })
                let records = try #require(location.recordsFile)
                #expect(FileManager.default.fileExists(atPath: records.path))
                #expect(!relocated.holdsStore() && relocated.directory == root + "/elsewhere")
            case .postgresql:
                // A schema on a server: it holds a store once its tables are made; no directory, no file.
                #expect(location.holdsStore() && location.directory == nil && location.files.isEmpty)
                #expect(try #require(location.sizeAtRest()) > 0)
                #expect(!relocated.holdsStore())
            case .memory:
                // Every store in memory is new and reachable only through its handle: no place holds one, no file.
                #expect(!location.holdsStore() && location.sizeAtRest() == nil)
                #expect(location.directory == nil && location.files.isEmpty)
                #expect(Self.storageError { _ = try location.open(readOnly: false, create: false) }?.code == .storeNotFound)
            }
        }
    }

    @Test func aSnapshotCopyHoldsEveryRecordAndGoesOnlyIntoAnEmptyPlaceOfItsKind() throws {
        try withTemporaryDirectory { root in
            let location = try Self.location(.lmdb, in: root)
            let backend = try location.open(readOnly: false, create: true)
            try Self.fill(backend)
            let copying = try backend.snapshotCopying(kind: location.kind)
            let destination = try Self.location(.lmdb, in: root, named: "copy")
            let bytes = try copying.copy(to: destination, progress: nil)
            #expect(destination.holdsStore() && destination.sizeAtRest() == bytes)
            let copy = try destination.open(readOnly: true, create: false)
            #expect(try Self.contents(copy) == Self.contents(backend))
            // A place that holds a copy already, or one of another kind, is refused with nothing written.
            #expect(Self.storageError { _ = try copying.copy(to: destination, progress: nil) }?.code == .invalidArgument)
            let memory = try Self.location(.memory, in: root)
            #expect(Self.storageError { _ = try copying.copy(to: memory, progress: nil) }?.code == .invalidArgument)
        }
    }

    @Test func compactionKeepsEveryEntryAndRefusesAStoreThatIsOpen() throws {
        try withTemporaryDirectory { root in
            let location = try Self.location(.lmdb, in: root)
            let compacting = try location.compacting()
            var before: [String: [[UInt8]]] = [:]
            do {
                let backend = try location.open(readOnly: false, create: true)
                try Self.fill(backend, count: 2_000)
                try backend.write { txn in
                    for index in 0..<1_900 { try txn.delete(in: Self.space, key: [UInt8(index >> 8), UInt8(index & 0xFF)]) }
                }
                before = try Self.contents(backend)
                #expect(Self.storageError { _ = try compacting.compact(progress: nil) }?.code == .storeInUse)
            }
            let outcome = try compacting.compact(progress: nil)
            #expect(outcome.sizeAfter < outcome.sizeBefore && outcome.sizeAfter == location.sizeAtRest())
            #expect(outcome.entries[Self.space] == 100 && outcome.entries[KeySpace.accessTokens] == 2_000)
            let backend = try location.open(readOnly: true, create: false)
            #expect(try Self.contents(backend) == before)
        }
    }

    @Test func quarantineMovesTheWholeStoreAsideAndRefusesAStoreThatIsOpen() throws {
        try withTemporaryDirectory { root in
            let location = try Self.location(.lmdb, in: root)
            let quarantining = try location.quarantining()
            let target = root + "/store.corrupt"
            var before: [String: [[UInt8]]] = [:]
            do {
                let backend = try location.open(readOnly: false, create: true)
                try Self.fill(backend)
                before = try Self.contents(backend)
                #expect(Self.storageError { try quarantining.moveAside(to: target) }?.code == .storeInUse)
                #expect(!FileManager.default.fileExists(atPath: target))
            }
            try quarantining.moveAside(to: target)
            let aside = location.relocated(to: target)
            #expect(!location.holdsStore() && aside.holdsStore())
            #expect(try Self.contents(aside.open(readOnly: true, create: false)) == before)
            #expect(Self.storageError { try quarantining.moveAside(to: target) }?.code == .storeNotFound)
        }
    }

    /// What each kind offers: LMDB every capability, memory none, and a refusal names the capability and the kind.
    @Test(arguments: TestBackend.allCases)
    func aKindRefusesACapabilityItLacksNamingIt(kind: TestBackend) throws {
        try withTemporaryDirectory { root in
            let location = try Self.location(kind, in: root)
            let backend = try location.open(readOnly: false, create: true)
            let refusals: [(StorageCapability, StorageError?)] = [
                (.compaction, Self.storageError { _ = try location.compacting() }),
                (.quarantine, Self.storageError { _ = try location.quarantining() }),
                (.snapshotCopy, Self.storageError { _ = try backend.snapshotCopying(kind: location.kind) }),
            ]
            #expect(Set(refusals.map(\.0)) == Set(StorageCapability.allCases))
            for (capability, refusal) in refusals {
                switch kind {
                case .lmdb:
                    #expect(refusal == nil, "LMDB refused \(capability)")
                case .memory, .postgresql:
                    let refusal = try #require(refusal, "\(kind) offered \(capability)")
                    #expect(refusal.code == .unsupportedEnvironment)
                    #expect(refusal.message.contains(capability.rawValue) && refusal.message.contains(location.kind), "\(refusal.message)")
                }
            }
        }
    }

    /// The operations on a store in memory: each refused before it does anything, naming what the backend lacks.
    @Test func maintenanceOfAStoreInMemoryIsRefusedNamingTheCapability() throws {
        func message(_ body: () throws -> Void) -> String? {
            do { try body() } catch let error as TokenCacheError where error.code == .unsupportedEnvironment { return error.message } catch {}
            return nil
        }
        try TestStore.with(.memory) { store, cache in
            let destination = store.root + "/copy"
            #expect(message { _ = try cache.backup(to: destination) }?.contains(StorageCapability.snapshotCopy.rawValue) == true)
            #expect(!FileManager.default.fileExists(atPath: destination))
            #expect(message { _ = try TokenStore.compact(store.configuration) }?.contains(StorageCapability.compaction.rawValue) == true)
            #expect(message { _ = try TokenStore.quarantine(store.configuration, force: true) }?.contains(StorageCapability.quarantine.rawValue) == true)
        }
    }
}
