import Foundation
import TestSupport
import Testing

@testable import TokenCache
import TokenCacheOperations

/// `TokenStore.compact(_:)`: the data file shrinks to its records, which stay the same; refused while the store is
/// open; an interrupted compaction's leftover is cleared by the next.
@Suite struct CompactTests {
    /// 600 access tokens of 4 KiB secrets (overflow pages), then 500 of them deleted: free pages LMDB keeps.
    private static func populateAndThin(_ configuration: Configuration) throws {
        let cache = try TokenStore.open(configuration)
        let padding = String(repeating: "x", count: 4096)
        try cache.write { writer in
            for index in 0..<600 { try writer.put(Samples.accessToken(target: "scope.\(index)", secret: "at-\(index)-\(padding)")) }
        }
        try cache.write { writer in
            for index in 0..<500 { try writer.delete(Samples.accessToken(target: "scope.\(index)").key) }
        }
    }

    private static func secrets(_ configuration: Configuration) throws -> [String] {
        var readOnly = configuration
        readOnly.readOnly = true
        return try TokenStore.open(readOnly).list(AccessToken.self).records.map { $0.entity.secret.reveal() }.sorted()
    }

    private static func dataFileSize(_ directory: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: directory + "/data.mdb")[.size] as? Int)
    }

    /// 1,500 access tokens of about 1 KiB, one per transaction as ingests arrive, under blind-index keys (random
    /// order); nothing deleted, so no free page to drop.
    private static func populateInRandomOrder(_ configuration: Configuration) throws {
        let cache = try TokenStore.open(configuration)
        let padding = String(repeating: "y", count: 1000)
        for index in 0..<1500 { try cache.put(Samples.accessToken(target: "scope.\(index)", secret: "at-\(index)-\(padding)")) }
    }

    /// A store created, filled by `populate` and closed: compaction needs it closed in this process.
    private static func withClosedStore(
        populatedBy populate: (Configuration) throws -> Void = populateAndThin, _ body: (TestStore) throws -> Void
    ) throws {
        try withTemporaryDirectory { root in
            let store = TestStore(root: root)
            try KeyFile.create(at: store.keyFile)
            _ = try TokenStore.create(store.configuration)
            try populate(store.configuration)
            try body(store)
        }
    }

    @Test func theFileShrinksAndTheRecordsStayTheSame() throws {
        try Self.withClosedStore { store in
            let before = try Self.secrets(store.configuration)
            let sizeBefore = try Self.dataFileSize(store.directory)
            let report = try TokenStore.compact(store.configuration)
            #expect(report.sizeBefore == sizeBefore)
            #expect(report.sizeAfter == (try Self.dataFileSize(store.directory)))
            #expect(report.sizeAfter * 3 < report.sizeBefore, "\(report.sizeBefore) → \(report.sizeAfter)")
            #expect(report.recordCounts[.accessToken] == 100)
            #expect(try Self.secrets(store.configuration) == before)
            #expect(before.count == 100)
            #expect(try TokenStore.open(store.configuration).verify().isClean)
            #expect(try FileManager.default.attributesOfItem(atPath: store.directory + "/data.mdb")[.posixPermissions] as? Int == 0o600)

            // The compacted store takes writes, and they survive another compaction.
            try TokenStore.open(store.configuration).put(Samples.accessToken(target: "after", secret: "at-after"))
            _ = try TokenStore.compact(store.configuration)
            #expect(try Self.secrets(store.configuration).contains("at-after"))
        }
    }

    /// A store whose records arrived in random key order (blind-index keys do) has leaf pages about a third empty,
    /// which a page-for-page copy keeps; compaction copies in key order and fills them, so even a store with no free
    /// page shrinks by a fifth or more, and holds the same records.
    @Test func recordsWrittenInRandomOrderArePackedIntoFullPages() throws {
        try Self.withClosedStore(populatedBy: Self.populateInRandomOrder) { store in
            let before = try Self.secrets(store.configuration)
            let report = try TokenStore.compact(store.configuration)
            #expect(report.sizeAfter * 10 <= report.sizeBefore * 8, "\(report.sizeBefore) → \(report.sizeAfter)")
            #expect(try Self.secrets(store.configuration) == before && before.count == 1500)
            #expect(try TokenStore.open(store.configuration).verify().isClean)
        }
    }

    @Test func refusedWhileTheStoreIsOpenInThisProcess() throws {
        try Self.withClosedStore { store in
            let sizeBefore = try Self.dataFileSize(store.directory)
            let open = try TokenStore.open(store.configuration)
            #expect(errorCode { try TokenStore.compact(store.configuration) } == .storeInUse)
            #expect(try Self.dataFileSize(store.directory) == sizeBefore)
            #expect(try open.list(AccessToken.self).records.count == 100)
        }
    }

    @Test func aLeftoverOfAnInterruptedCompactionIsRemovedAndNeverOpened() throws {
        try Self.withClosedStore { store in
            let leftover = store.directory + "/data.mdb.compacting"
            #expect(FileManager.default.createFile(atPath: leftover, contents: Data(repeating: 0xA5, count: 12288)))
            #expect(try Self.secrets(store.configuration).count == 100, "a store with a leftover opens as it was")
            _ = try TokenStore.compact(store.configuration)
            #expect(!FileManager.default.fileExists(atPath: leftover))
            #expect(try Self.secrets(store.configuration).count == 100)
        }
    }

    @Test func storesThatCannotBeCompacted() throws {
        try withTemporaryDirectory { root in
            let missing = Configuration(directory: root + "/none", keySource: .keyFile(path: root + "/key"))
            #expect(errorCode { try TokenStore.compact(missing) } == .storeNotFound)
            let memory = Configuration(directory: Configuration.inMemoryDirectory, keySource: .keyFile(path: root + "/key"))
            #expect(errorCode { try TokenStore.compact(memory) } == .unsupportedEnvironment)
        }
        try Self.withClosedStore { store in
            chmod(store.directory + "/data.mdb", 0o644)
            #expect(errorCode { try TokenStore.compact(store.configuration) } == .insecurePermissions)
        }
    }
}
