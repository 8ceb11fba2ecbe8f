import Foundation
import Testing
import TokenCacheLMDB

@Suite struct BasicOperationsTests {
    @Test func putGetDeleteRoundTrip() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)

        try environment.write { txn in try txn.put(in: db, key: "alpha", value: "one") }
        #expect(try environment.read { try $0.string(in: db, forKey: "alpha") } == "one")

        try environment.write { txn in try txn.put(in: db, key: "alpha", value: "two") }
        #expect(try environment.read { try $0.string(in: db, forKey: "alpha") } == "two")

        let deleted = try environment.write { try $0.delete(in: db, key: bytes("alpha")) }
        #expect(deleted)
        #expect(try environment.read { try $0.string(in: db, forKey: "alpha") } == nil)
        let deletedAgain = try environment.write { try $0.delete(in: db, key: bytes("alpha")) }
        #expect(!deletedAgain)
    }

    @Test func getOfAMissingKeyReturnsNil() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        try environment.write { txn in try txn.put(in: db, key: "present", value: "x") }
        let value = try environment.read { txn throws in
            try txn.withValue(in: db, forKey: bytes("absent")) { _ in Issue.record("body must not run") }
        }
        #expect(value == nil)
    }

    @Test func prefixScanReturnsExactlyTheMatchingKeysInOrder() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        try environment.write { txn throws in
            for key in ["b1", "ab", "a2", "a", "a10", "c", "a1", "`z", "b"] {
                try txn.put(in: db, key: key, value: "v-\(key)")
            }
        }
        try environment.read { txn throws in
            #expect(try txn.keys(in: db, prefix: "a") == ["a", "a1", "a10", "a2", "ab"])
            #expect(try txn.keys(in: db, prefix: "a1") == ["a1", "a10"])
            #expect(try txn.keys(in: db, prefix: "b") == ["b", "b1"])
            #expect(try txn.keys(in: db, prefix: "d").isEmpty)
            #expect(try txn.keys(in: db, prefix: "0").isEmpty)
            var pairs: [String: String] = [:]
            try txn.forEach(in: db, prefix: bytes("a1")) { key, value in
                pairs[string(key)] = string(value)
                return true
            }
            #expect(pairs == ["a1": "v-a1", "a10": "v-a10"])
        }
    }

    @Test func scanFromAKeyVisitsEveryLaterKeyInOrder() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        try environment.write { txn throws in
            for key in ["b1", "ab", "a2", "a", "c", "a1", "b"] { try txn.put(in: db, key: key, value: "v") }
        }
        func keys(from start: String) throws -> [String] {
            try environment.read { txn throws in
                var visited: [String] = []
                try txn.forEach(in: db, from: bytes(start)) { key, _ in
                    visited.append(string(key))
                    return true
                }
                return visited
            }
        }
        #expect(try keys(from: "a2") == ["a2", "ab", "b", "b1", "c"])  // from an existing key, inclusive
        #expect(try keys(from: "a3") == ["ab", "b", "b1", "c"])  // from between two keys
        #expect(try keys(from: "") == ["a", "a1", "a2", "ab", "b", "b1", "c"])  // empty: from the first
        #expect(try keys(from: "d").isEmpty)  // past the last
    }

    @Test func emptyPrefixScansTheWholeDatabaseInKeyOrder() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        let keys = (0..<300).map { String(format: "key-%04d", $0) }
        try environment.write { txn throws in
            for key in keys.shuffled() { try txn.put(in: db, key: key, value: key) }
        }
        #expect(try environment.read { try $0.keys(in: db, prefix: "") } == keys)
        #expect(try environment.read { try $0.count(in: db) } == keys.count)
    }

    @Test func scanStopsWhenTheBodyReturnsFalse() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        try environment.write { txn throws in
            for index in 0..<10 { try txn.put(in: db, key: "k\(index)", value: "v") }
        }
        var visited: [String] = []
        try environment.read { txn throws in
            try txn.forEach(in: db, prefix: []) { key, _ in
                visited.append(string(key))
                return visited.count < 3
            }
        }
        #expect(visited == ["k0", "k1", "k2"])
    }

    @Test func errorsThrownByTheScanBodyPropagateUnchanged() throws {
        struct Marker: Error, Equatable {}
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        try environment.write { txn in try txn.put(in: db, key: "k", value: "v") }
        #expect(throws: Marker()) {
            try environment.read { txn in try txn.forEach(in: db, prefix: []) { _, _ in throw Marker() } }
        }
    }

    @Test func aThrowingWriteBodyCommitsNothing() throws {
        struct Abort: Error, Equatable {}
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        try environment.write { txn in try txn.put(in: db, key: "existing", value: "old") }

        #expect(throws: Abort()) {
            try environment.write { txn throws in
                try txn.put(in: db, key: "first", value: "1")
                try txn.put(in: db, key: "second", value: "2")
                try txn.put(in: db, key: "existing", value: "new")
                _ = try txn.delete(in: db, key: bytes("existing"))
                throw Abort()
            }
        }
        try environment.read { txn throws in
            #expect(try txn.keys(in: db, prefix: "") == ["existing"])
            #expect(try txn.string(in: db, forKey: "existing") == "old")
        }
    }

    @Test func writeReturnsTheBodysResultAndReadSeesCommittedData() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        let result = try environment.write { txn -> Int in
            try txn.put(in: db, key: "a", value: "1")
            // Inside the write the uncommitted value is visible to the same transaction.
            #expect(try txn.string(in: db, forKey: "a") == "1")
            // A read nested in the write sees the last committed snapshot, not the write's changes.
            #expect(try environment.read { try $0.string(in: db, forKey: "a") } == nil)
            return 42
        }
        #expect(result == 42)
        #expect(try environment.read { try $0.string(in: db, forKey: "a") } == "1")
    }

    @Test func reservedPutWritesInPlace() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        try environment.write { txn throws in
            try txn.put(in: db, key: bytes("reserved"), reservingCount: 5000) { buffer in
                #expect(buffer.count == 5000)
                #expect(buffer.allSatisfy { $0 == 0 })  // zeroed before fill
                for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: index) }
            }
            try txn.put(in: db, key: bytes("empty"), reservingCount: 0) { buffer in #expect(buffer.isEmpty) }
        }
        try environment.read { txn throws in
            let matches = try txn.withValue(in: db, forKey: bytes("reserved")) { value in
                value.count == 5000 && value.enumerated().allSatisfy { $0.element == UInt8(truncatingIfNeeded: $0.offset) }
            }
            #expect(matches == true)
            #expect(try txn.withValue(in: db, forKey: bytes("empty")) { $0.count } == 0)
        }
    }

    @Test func aThrowingReserveFillLeavesNothingCommitted() throws {
        struct FillFailed: Error, Equatable {}
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        #expect(throws: FillFailed()) {
            try environment.write { txn throws in
                try txn.put(in: db, key: "before", value: "x")
                try txn.put(in: db, key: bytes("reserved"), reservingCount: 16) { _ in throw FillFailed() }
            }
        }
        // Even if the body swallows the fill error, the transaction must not commit a half-filled value.
        #expect(throws: LMDBError.badTxn) {
            try environment.write { txn throws in
                try txn.put(in: db, key: "before", value: "x")
                try? txn.put(in: db, key: bytes("reserved"), reservingCount: 16) { _ in throw FillFailed() }
            }
        }
        #expect(try environment.read { try $0.count(in: db) } == 0)
    }

    @Test func emptyAndOverlongKeysThrowBadValSize() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        let overlong = [UInt8](repeating: 0x61, count: 512)  // liblmdb's default maximum is 511
        let longest = [UInt8](repeating: 0x61, count: 511)
        try environment.write { txn throws in
            for key in [[], overlong] {
                #expect(throws: LMDBError.badValSize) { try txn.put(in: db, key: key, value: UnsafeRawBufferPointer(start: nil, count: 0)) }
                #expect(throws: LMDBError.badValSize) { try txn.put(in: db, key: key, reservingCount: 1) { _ in } }
                #expect(throws: LMDBError.badValSize) { try txn.delete(in: db, key: key) }
                #expect(throws: LMDBError.badValSize) { try txn.withValue(in: db, forKey: key) { _ in } }
            }
            #expect(throws: LMDBError.badValSize) { try txn.forEach(in: db, prefix: overlong) { _, _ in true } }
            // The transaction is still usable after rejected keys, and a 511-byte key works.
            try [UInt8](repeating: 1, count: 3).withUnsafeBytes { try txn.put(in: db, key: longest, value: $0) }
        }
        #expect(try environment.read { try $0.withValue(in: db, forKey: longest) { Array($0) } } == [1, 1, 1])
    }

    @Test func deletingDuringAScanRemovesEveryMatchingKey() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        try environment.write { txn throws in
            for index in 0..<500 { try txn.put(in: db, key: String(format: "p%04d", index), value: "v") }
            for index in 0..<10 { try txn.put(in: db, key: "q\(index)", value: "v") }
        }
        var visited = 0
        try environment.write { txn throws in
            try txn.forEach(in: db, prefix: bytes("p")) { key, _ in
                visited += 1
                return try txn.delete(in: db, key: Array(key))
            }
        }
        #expect(visited == 500)
        #expect(try environment.read { try $0.keys(in: db, prefix: "") } == (0..<10).map { "q\($0)" })
    }

    @Test func removeAllEmptiesOnlyThatDatabase() throws {
        let directory = try TemporaryDirectory()
        let environment = try Environment.open(directory: directory.path, databases: ["a", "b"])
        let a = try #require(environment.database("a"))
        let b = try #require(environment.database("b"))
        #expect(environment.database("c") == nil)
        try environment.write { txn throws in
            for index in 0..<50 {
                try txn.put(in: a, key: "k\(index)", value: "a")
                try txn.put(in: b, key: "k\(index)", value: "b")
            }
        }
        try environment.write { try $0.removeAll(in: a) }
        try environment.read { txn throws in
            #expect(try txn.count(in: a) == 0)
            #expect(try txn.count(in: b) == 50)
            #expect(try txn.string(in: b, forKey: "k7") == "b")
        }
        #expect(environment.info.entries == ["a": 0, "b": 50])
    }

    @Test func aDatabaseHandleFromAnotherEnvironmentIsRejected() throws {
        let first = try TemporaryDirectory()
        let second = try TemporaryDirectory()
        let (environment, _) = try makeStore(in: first)
        let (_, foreign) = try makeStore(in: second)
        #expect(throws: LMDBError.badDbi) {
            try environment.read { try $0.withValue(in: foreign, forKey: bytes("k")) { _ in } }
        }
    }

    @Test func dataSurvivesReopeningTheStore() throws {
        let directory = try TemporaryDirectory()
        weak var released: Environment?
        do {
            let (environment, db) = try makeStore(in: directory)
            try environment.write { txn in try txn.put(in: db, key: "persisted", value: "yes") }
            released = environment
        }
        #expect(released == nil)
        let (reopened, db) = try makeStore(in: directory)
        #expect(try reopened.read { try $0.string(in: db, forKey: "persisted") } == "yes")
    }

    @Test func infoDescribesTheEnvironment() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory) { $0.initialMapSize = 3 << 20; $0.maxReaders = 50 }
        try environment.write { txn in try txn.put(in: db, key: "k", value: "v") }
        let info = environment.info
        #expect(info.mapSize == 3 << 20)
        #expect(environment.mapSize == 3 << 20)
        #expect(info.pageSize >= 4096)
        #expect(info.lastPageNumber >= 2)
        #expect(info.maxReaders == 50)
        #expect(info.entries == ["t": 1])
        #expect(environment.staleReadersCleared == 0)
        #expect(environment.checkReaders() == 0)
        #expect(Environment.libraryVersion.hasPrefix("LMDB 0.9."))
    }

    @Test func readOnlyEnvironmentsReadButRefuseWrites() throws {
        let directory = try TemporaryDirectory()
        do {
            let (environment, db) = try makeStore(in: directory)
            try environment.write { txn in try txn.put(in: db, key: "k", value: "v") }
        }
        var options = EnvironmentOptions()
        options.readOnly = true
        let readOnly = try Environment.open(directory: directory.path, databases: ["t"], options: options)
        let db = try #require(readOnly.database("t"))
        #expect(try readOnly.read { try $0.string(in: db, forKey: "k") } == "v")
        #expect(throws: LMDBError.accessDenied) { try readOnly.write { _ in } }
        // A read-only instance cannot satisfy a read-write open of the same store.
        #expect(throws: LMDBError.invalidArgument) {
            _ = try Environment.open(directory: directory.path, databases: ["t"])
        }
        // A database that does not exist cannot be created read-only.
        let other = try TemporaryDirectory()
        do { _ = try makeStore(in: other) }
        #expect(throws: LMDBError.notFound) {
            _ = try Environment.open(directory: other.path, databases: ["t", "missing"], options: options)
        }
    }

    @Test func errorDescriptionsNameTheCondition() {
        #expect(LMDBError.mapFull.description.contains("MDB_MAP_FULL"))
        #expect(LMDBError.ioError.description.contains("code \(EIO)"))
        #expect(LMDBError.nestedWrite.description.contains("write"))
        #expect(LMDBError(code: MDBCodes.notFound) == .notFound)
        let caught: Bool
        do { throw LMDBError.mapFull } catch LMDBError.mapFull { caught = true } catch { caught = false }
        #expect(caught)
        let codes: [LMDBError] = [.usedAfterFork, .nestedWrite, .truncatedDataFile, .unsupportedLibraryVersion]
        #expect(Set(codes.map(\.code)).count == 4)
        #expect(codes.allSatisfy { $0.code > 1_000_000 })
    }

    @Test func libraryVersionsWithTheRobustMutexBugAreRefused() {
        #expect(!Environment.isUnsupportedLibraryVersion(major: 0, minor: 9, patch: 24))
        #expect(!Environment.isUnsupportedLibraryVersion(major: 0, minor: 9, patch: 25))
        for patch in 26...31 {
            #expect(Environment.isUnsupportedLibraryVersion(major: 0, minor: 9, patch: patch))
        }
        #expect(!Environment.isUnsupportedLibraryVersion(major: 0, minor: 9, patch: 32))
        #expect(!Environment.isUnsupportedLibraryVersion(major: 1, minor: 0, patch: 27))
    }
}

/// LMDB codes restated for tests, which do not import the C module.
enum MDBCodes {
    static let notFound: Int32 = -30798
}
