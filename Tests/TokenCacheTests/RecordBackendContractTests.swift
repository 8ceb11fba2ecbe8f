import Foundation
import TestSupport
import Testing
import TokenCacheStorage
import TokenCachePostgreSQL

@testable import TokenCache
import TokenCacheRecords

/// The contract of the storage seam, checked on every backend: what the store relies on from wherever its records live.
@Suite struct RecordBackendContractTests {
    static let space = KeySpace.accounts

    /// A backend of `kind` with the store's key spaces, and nothing else in it.
    static func withBackend<R>(_ kind: TestBackend, _ body: (any RecordBackend) throws -> R) throws -> R {
        try withTemporaryDirectory { root in
            switch kind {
            case .memory:
                return try body(InMemoryRecordBackend(name: Configuration.inMemoryDirectory))
            case .postgresql:
                let address = try PostgreSQLAddress(parsing: PostgreSQLTestServer.uniqueStoreURL("contract")!)
                return try body(try PostgreSQLStorageLocation(address: address, timeout: PostgreSQLTestServer.timeout).open(readOnly: false, create: true))
            case .lmdb:
                let options = LMDBRecordBackend.Options(
                    directory: root, initialMapSize: 1 << 20, maximumMapSize: 64 << 20, readOnly: false, allowNetworkFilesystem: false
                )
                return try body(try LMDBRecordBackend.open(options))
            }
        }
    }

    static func put(_ backend: any RecordBackend, _ key: [UInt8], _ value: String, in space: KeySpace = space) throws {
        try backend.write { txn in try Array(value.utf8).withUnsafeBytes { try txn.put(in: space, key: key, value: $0) } }
    }

    static func value(_ reader: any RecordReading, _ key: [UInt8], in space: KeySpace = space) throws -> String? {
        try reader.withValue(in: space, forKey: key) { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
    }

    static func keys(_ reader: any RecordReading, prefix: [UInt8] = [], from start: [UInt8]? = nil) throws -> [[UInt8]] {
        var keys: [[UInt8]] = []
        let visit: (RawSpan, RawSpan) -> Bool = { key, _ in
            key.withUnsafeBytes { keys.append(Array($0)) }
            return true
        }
        if let start { try reader.forEach(in: space, from: start, visit) } else { try reader.forEach(in: space, prefix: prefix, visit) }
        return keys
    }

    @Test(arguments: TestBackend.allCases)
    func keysAreOrderedBytewiseWithAKeyBeforeItsExtensions(backend kind: TestBackend) throws {
        try Self.withBackend(kind) { backend in
            let keys: [[UInt8]] = [[2], [1, 0xFF], [1], [0xFF], [1, 0], [0, 0xFF, 0xFF], [1, 0, 0]]
            for key in keys { try Self.put(backend, key, "v") }
            try backend.read { reader throws in
                #expect(try Self.keys(reader) == [[0, 0xFF, 0xFF], [1], [1, 0], [1, 0, 0], [1, 0xFF], [2], [0xFF]])
                #expect(try Self.keys(reader, prefix: [1]) == [[1], [1, 0], [1, 0, 0], [1, 0xFF]])
                #expect(try Self.keys(reader, prefix: [1, 0]) == [[1, 0], [1, 0, 0]])
                #expect(try Self.keys(reader, prefix: [3]).isEmpty)
                #expect(try Self.keys(reader, from: [1, 0, 1]) == [[1, 0xFF], [2], [0xFF]])
                #expect(try reader.count(in: Self.space) == keys.count)
                #expect(try reader.count(in: KeySpace.idTokens) == 0)
            }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func keySpacesAreSeparateAndPutsReplace(backend kind: TestBackend) throws {
        try Self.withBackend(kind) { backend in
            try Self.put(backend, [7], "account")
            try Self.put(backend, [7], "token", in: KeySpace.accessTokens)
            try Self.put(backend, [7], "account, again")
            try backend.read { reader throws in
                #expect(try Self.value(reader, [7]) == "account, again")
                #expect(try Self.value(reader, [7], in: KeySpace.accessTokens) == "token")
                #expect(try Self.value(reader, [8]) == nil)
            }
            #expect(try backend.write { try $0.delete(in: Self.space, key: [7]) })
            #expect(try !backend.write { try $0.delete(in: Self.space, key: [7]) })
            try backend.read { reader throws in #expect(try Self.value(reader, [7]) == nil) }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aReadSeesTheSnapshotItBeganWithAndTheSnapshotIDChangesOnCommit(backend kind: TestBackend) throws {
        try Self.withBackend(kind) { backend in
            try Self.put(backend, [1], "old")
            let before = try backend.read { $0.snapshotID }
            let concurrent = DispatchSemaphore(value: 0)
            try backend.read { reader throws in
                // LMDB binds a write to a thread of its own; the write commits while this read is open.
                DispatchQueue.global().async {
                    try? Self.put(backend, [1], "new")
                    concurrent.signal()
                }
                concurrent.wait()
                #expect(try Self.value(reader, [1]) == "old")
                // Equal ids promise equal contents. A server's commits are not numbered in commit order, so its
                // backend never promises it: every transaction has an id of its own.
                if kind == .postgresql { #expect(reader.snapshotID != before) } else { #expect(reader.snapshotID == before) }
            }
            try backend.read { reader throws in
                #expect(try Self.value(reader, [1]) == "new")
                #expect(reader.snapshotID != before)
            }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aWriteThatThrowsLeavesNothingAndWritesAreVisibleInsideTheirTransaction(backend kind: TestBackend) throws {
        struct Stop: Error {}
        try Self.withBackend(kind) { backend in
            #expect(throws: Stop.self) {
                try backend.write { txn throws in
                    try Array("x".utf8).withUnsafeBytes { try txn.put(in: Self.space, key: [1], value: $0) }
                    #expect(try Self.value(txn, [1]) == "x")
                    #expect(try Self.keys(txn) == [[1]])
                    throw Stop()
                }
            }
            try backend.read { reader throws in #expect(try Self.keys(reader).isEmpty) }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aReservedValueIsFilledInPlaceAndAFailedFillCommitsNothing(backend kind: TestBackend) throws {
        struct FillFailed: Error {}
        try Self.withBackend(kind) { backend in
            try backend.write { txn throws in
                try txn.put(in: Self.space, key: [1], reservingCount: 3) { buffer in
                    #expect(buffer.allSatisfy { $0 == 0 })  // never stale bytes
                    buffer.copyBytes(from: Array("abc".utf8))
                }
            }
            try backend.read { reader throws in #expect(try Self.value(reader, [1]) == "abc") }
            // A body that swallows the fill's error must still not commit (a zeroed value would be stored).
            #expect(throws: (any Error).self) {
                try backend.write { txn throws in
                    try Array("other".utf8).withUnsafeBytes { try txn.put(in: Self.space, key: [2], value: $0) }
                    _ = try? txn.put(in: Self.space, key: [3], reservingCount: 4) { _ in throw FillFailed() }
                }
            }
            try backend.read { reader throws in #expect(try Self.keys(reader) == [[1]]) }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aScanMayDeleteTheEntryItWasGiven(backend kind: TestBackend) throws {
        try Self.withBackend(kind) { backend in
            for key: UInt8 in 1...6 { try Self.put(backend, [0, key], "v\(key)") }
            try backend.write { txn throws in
                var visited: [[UInt8]] = []
                try txn.forEach(in: Self.space, prefix: [0]) { key, _ in try key.withUnsafeBytes { key in
                    let key = Array(key)
                    visited.append(key)
                    if key[1] % 2 == 0 { _ = try txn.delete(in: Self.space, key: key) }
                    return true
                } }
                #expect(visited == (1...6).map { [0, UInt8($0)] })
            }
            try backend.read { reader throws in #expect(try Self.keys(reader) == [[0, 1], [0, 3], [0, 5]]) }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aNestedWriteIsRefusedAndKeysOutsideTheLimitsAreRejected(backend kind: TestBackend) throws {
        try Self.withBackend(kind) { backend in
            let nested = try #require(throws: StorageError.self) { try backend.write { _ in try backend.write { _ in } } }
            #expect(nested.code == .unsupportedEnvironment)
            for key in [[UInt8](), [UInt8](repeating: 1, count: 512)] {
                #expect(throws: (any Error).self) { try Self.put(backend, key, "v") }
            }
            try Self.put(backend, [UInt8](repeating: 1, count: 511), "longest")
            try backend.read { reader throws in #expect(try Self.keys(reader) == [[UInt8](repeating: 1, count: 511)]) }
        }
    }

    @Test(arguments: TestBackend.allCases)
    func concurrentWritersAreSerialisedAndLoseNothing(backend kind: TestBackend) throws {
        try Self.withBackend(kind) { backend in
            let counter: [UInt8] = [9]
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                for _ in 0..<25 {
                    try? backend.write { txn throws in
                        let current = try Self.value(txn, counter).flatMap { Int($0) } ?? 0
                        try Array(String(current + 1).utf8).withUnsafeBytes { try txn.put(in: Self.space, key: counter, value: $0) }
                    }
                }
            }
            try backend.read { reader throws in #expect(try Self.value(reader, counter) == "200") }
        }
    }
}

/// What is particular to in-memory stores.
@Suite struct InMemoryStoreTests {
    @Test func anInMemoryStoreTouchesNoFileAndEveryCreateIsANewStore() throws {
        let before = try FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath)
        let first = try TokenStore.create(.inMemory())
        let second = try TokenStore.create(.inMemory())
        try first.put(Samples.account())
        #expect(try first.get(Samples.account().key)?.entity == Samples.account())
        #expect(try second.get(Samples.account().key) == nil)
        #expect(!FileManager.default.fileExists(atPath: Configuration.inMemoryDirectory))
        #expect(try FileManager.default.contentsOfDirectory(atPath: FileManager.default.currentDirectoryPath) == before)
        let info = try first.info()
        #expect(info.directory == Configuration.inMemoryDirectory && info.recordCounts[.account] == 1 && info.usedBytes > 0)
    }

    @Test func anInMemoryStoreCannotBeOpenedOrCreatedReadOnly() throws {
        #expect(errorCode { try TokenStore.open(.inMemory()) } == .storeNotFound)
        var readOnly = Configuration.inMemory()
        readOnly.readOnly = true
        #expect(errorCode { try TokenStore.create(readOnly) } == .readOnly)
    }

    @Test func recordsInMemoryAreSealedAsOnDisk() throws {
        let cache = try TokenStore.create(.inMemory())
        try cache.put(Samples.accessToken(secret: Canary.secret))
        let stored = try cache.store.backend.read { reader throws in
            var bytes: [UInt8] = []
            try reader.forEach(in: KeySpace.accessTokens, prefix: []) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
                bytes += Array(key) + Array(value)
                return true
            } } }
            return Data(bytes)
        }
        #expect(!stored.isEmpty)
        for canary in ["at-secret", Canary.secret, Samples.home, Samples.client, "User.Read"] { #expect(!stored.contains(canary)) }
        #expect(try cache.get(Samples.accessToken().key)?.entity.secret.reveal() == Canary.secret)
    }
}
