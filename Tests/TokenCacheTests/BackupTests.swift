import Foundation
import Synchronization
import Testing

@testable import TokenCache
import TokenCacheOperations

/// `TokenStore.backup(to:)`: a copy that is a store of its own, opened by the same key, holding the same records.
@Suite struct BackupTests {
    /// A store with one record of each kind and a hundred more access tokens.
    private static func populate(_ cache: TokenStore) throws {
        try cache.write { writer in
            try writer.put(Samples.refreshToken())
            try writer.put(Samples.idToken())
            try writer.put(Samples.account())
            try writer.put(Samples.appMetadata())
            for index in 0..<100 { try writer.put(Samples.accessToken(target: "scope.\(index)", secret: "at-\(index)")) }
        }
    }

    @Test func theCopyOpensWithTheSameKeyAndHoldsTheSameRecords() throws {
        try TestStore.with { store, cache in
            try Self.populate(cache)
            let destination = store.root + "/backups/one"
            let report = try cache.backup(to: destination)
            #expect(report.recordCounts == [.accessToken: 100, .refreshToken: 1, .idToken: 1, .account: 1, .appMetadata: 1])
            #expect(report.bytesWritten == (try FileManager.default.attributesOfItem(atPath: destination + "/data.mdb")[.size] as? Int))

            var copyConfiguration = store.configuration
            copyConfiguration.directory = destination
            let copy = try TokenStore.open(copyConfiguration)
            #expect(try copy.info().storeID == cache.info().storeID)
            #expect(try copy.verify().isClean)
            let original = try cache.snapshot(), copied = try copy.snapshot()
            #expect(copied.accessTokens.map(\.entity) == original.accessTokens.map(\.entity))
            #expect(copied.refreshTokens.map(\.entity) == original.refreshTokens.map(\.entity))
            #expect(copied.accounts.map(\.entity) == original.accounts.map(\.entity))
            #expect(try copy.get(Samples.accessToken(target: "scope.42").key)?.entity.secret.reveal() == "at-42")
        }
    }

    /// A store whose records arrived in random key order (one per transaction, as ingests do) is copied in key order:
    /// the backup's pages are full, so it is a fifth or more smaller than the store, and holds the same records.
    @Test func theCopyIsPackedInKeyOrder() throws {
        try TestStore.with { store, cache in
            let padding = String(repeating: "z", count: 1000)
            for index in 0..<1500 { try cache.put(Samples.accessToken(target: "scope.\(index)", secret: "at-\(index)-\(padding)")) }
            let destination = store.root + "/packed"
            let report = try cache.backup(to: destination)
            let storeSize = try #require(try FileManager.default.attributesOfItem(atPath: store.directory + "/data.mdb")[.size] as? Int)
            #expect(report.bytesWritten * 10 <= storeSize * 8, "\(storeSize) → \(report.bytesWritten)")
            var copyConfiguration = store.configuration
            copyConfiguration.directory = destination
            let copy = try TokenStore.open(copyConfiguration)
            #expect(try copy.list(AccessToken.self).records.map(\.entity.secret) == cache.list(AccessToken.self).records.map(\.entity.secret))
            #expect(try copy.verify().isClean)
        }
    }

    @Test func theCopyIsASnapshotThatLaterWritesDoNotReach() throws {
        try TestStore.with { store, cache in
            try Self.populate(cache)
            let destination = store.root + "/copy"
            _ = try cache.backup(to: destination)
            try cache.put(Samples.accessToken(target: "later", secret: "at-later"))
            var copyConfiguration = store.configuration
            copyConfiguration.directory = destination
            #expect(try TokenStore.open(copyConfiguration).get(Samples.accessToken(target: "later").key) == nil)
        }
    }

    /// Under the test process's umask (the CLI tests run `cachetool backup` under umask 000, which a test here must not
    /// set: it is process-wide, and other tests run in parallel).
    @Test func filesAreOwnerOnly() throws {
        try TestStore.with { store, cache in
            let destination = store.root + "/open/copy"
            _ = try cache.backup(to: destination)
            let manager = FileManager.default
            #expect(try manager.attributesOfItem(atPath: destination)[.posixPermissions] as? Int == 0o700)
            #expect(try manager.attributesOfItem(atPath: store.root + "/open")[.posixPermissions] as? Int == 0o700)
            for name in try manager.contentsOfDirectory(atPath: destination) {
                #expect(try manager.attributesOfItem(atPath: destination + "/" + name)[.posixPermissions] as? Int == 0o600, "\(name)")
            }
        }
    }

    @Test func destinationsThatAreNotNewOrEmptyAreRefusedAndLeftAlone() throws {
        try TestStore.with { store, cache in
            let first = store.root + "/first"
            _ = try cache.backup(to: first)
            let before = try Data(contentsOf: URL(fileURLWithPath: first + "/data.mdb"))
            try cache.put(Samples.accessToken(target: "newer"))
            #expect(errorCode { try cache.backup(to: first) } == .storeAlreadyExists)
            #expect(try Data(contentsOf: URL(fileURLWithPath: first + "/data.mdb")) == before)

            #expect(errorCode { try cache.backup(to: store.directory) } == .invalidArgument)
            #expect(errorCode { try cache.backup(to: store.directory + "/../store/.") } == .invalidArgument)
            #expect(errorCode { try cache.backup(to: store.keyFile) } == .invalidArgument)

            let busy = store.root + "/busy"
            try FileManager.default.createDirectory(atPath: busy, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            _ = FileManager.default.createFile(atPath: busy + "/notes.txt", contents: Data("keep".utf8))
            #expect(errorCode { try cache.backup(to: busy) } == .invalidArgument)
            #expect(try FileManager.default.contentsOfDirectory(atPath: busy) == ["notes.txt"])

            let shared = store.root + "/shared"
            try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
            #expect(errorCode { try cache.backup(to: shared) } == .insecurePermissions)
        }
    }

    @Test func anInMemoryStoreHasNoFileToCopy() throws {
        try TestStore.with(.memory) { store, cache in
            #expect(errorCode { try cache.backup(to: store.root + "/copy") } == .unsupportedEnvironment)
        }
    }

    @Test func progressReportsBytesWrittenAgainstTheStoresSize() throws {
        try TestStore.with { store, cache in
            try Self.populate(cache)
            let calls = Mutex<[(Int, Int)]>([])
            let report = try cache.backup(to: store.root + "/copy") { written, total in calls.withLock { $0.append((written, total)) } }
            let seen = calls.withLock { $0 }
            // Sampled ten times a second, and once more at the end: a copy this quick has at least that last report.
            #expect(seen.last?.0 == report.bytesWritten)
            #expect(seen.map(\.0) == seen.map(\.0).sorted(), "the bytes written never go back")
            let used = try cache.info().usedBytes
            #expect(seen.allSatisfy { $0.1 == used })
        }
    }
}
