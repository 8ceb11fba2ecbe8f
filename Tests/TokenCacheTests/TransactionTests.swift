import Foundation
import TestSupport
import Testing
import TokenCacheStorage

@testable import TokenCache

@Suite struct TransactionTests {
    struct Boom: Error {}

    @Test(arguments: TestBackend.allCases)
    func aThrowingWriteKeepsNothing(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            try cache.put(Samples.account(realm: "before"))
            #expect(throws: Boom.self) {
                try cache.write { writer in
                    try writer.put(Samples.accessToken())
                    try writer.put(Samples.refreshToken())
                    try writer.delete(Samples.account(realm: "before").key)
                    throw Boom()
                }
            }
            #expect(try cache.get(Samples.accessToken().key) == nil)
            #expect(try cache.get(Samples.refreshToken().key) == nil)
            #expect(try cache.get(Samples.account(realm: "before").key) != nil)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func anInvalidEntityInABatchAbortsTheWholeBatch(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let code = errorCode {
                try cache.write { writer in
                    try writer.put(Samples.accessToken())
                    try writer.put(Samples.idToken(secret: ""))
                }
            }
            #expect(code == .invalidArgument)
            let total = try cache.info().recordCounts.values.reduce(0, +)
            #expect(total == 0)
        }
    }

    @Test(arguments: TestBackend.allCases)
    func writesAreVisibleInsideTheirTransaction(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let seen = try cache.write { writer in
                try writer.put(Samples.account())
                return try writer.get(Samples.account().key)?.entity
            }
            #expect(seen == Samples.account())
        }
    }

    @Test(arguments: TestBackend.allCases)
    func compareAndSwapWinsOnceAndReportsTheCurrentRevision(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let token = Samples.refreshToken(secret: "rt1")
            let created = try cache.put(token, expectedRevision: 0)
            #expect(backend.isFirst(created))
            // Creating again with "must not exist" conflicts.
            let exists = try #require(throws: TokenCacheError.self) { try cache.put(token, expectedRevision: 0) }
            #expect(exists.code == .conflict && exists.currentRevision == created)
            var rotated = token
            rotated.secret = Secret("rt2")
            #expect(try cache.put(rotated, expectedRevision: created) == created + 1)
            var stale = token
            stale.secret = Secret("rt-stale")
            let lost = try #require(throws: TokenCacheError.self) { try cache.put(stale, expectedRevision: created) }
            #expect(lost.code == .conflict && lost.currentRevision == created + 1)
            #expect(try cache.get(token.key)?.entity.secret.reveal() == "rt2")
            #expect(!lost.description.contains("rt2") && !lost.description.contains("rt-stale"))
            // Conditional delete.
            let refused = try #require(throws: TokenCacheError.self) { try cache.delete(token.key, expectedRevision: created) }
            #expect(refused.code == .conflict && refused.currentRevision == created + 1)
            #expect(try cache.get(token.key)?.revision == created + 1)
            #expect(try cache.delete(token.key, expectedRevision: created + 1))
        }
    }

    @Test(arguments: TestBackend.allCases)
    func nestedWritesAreRefusedInsteadOfDeadlocking(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            let error = try #require(throws: TokenCacheError.self) {
                try cache.write { _ in try cache.write { _ in } }
            }
            #expect(error.code == .unsupportedEnvironment)
        }
    }

    @Test func twoCachesOnOneStoreShareOneEnvironment() throws {
        try TestStore.with { store, cache in
            let second = try TokenStore.open(store.configuration)
            #expect(try #require(second.store.backend as? LMDBRecordBackend).environmentIdentity == (try #require(cache.store.backend as? LMDBRecordBackend)).environmentIdentity)
            try cache.put(Samples.account())
            #expect(try second.get(Samples.account().key) != nil)
        }
    }

    @Test func concurrentWritersAndReadersOnManyThreads() async throws {
        try await withTemporaryDirectoryAsync { root in
            let store = TestStore(root: root)
            try KeyFile.create(at: store.keyFile)
            let cache = try TokenStore.create(store.configuration)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<4 {
                    group.addTask {
                        for index in 0..<50 {
                            try cache.put(Samples.idToken(realm: "w\(writer)-\(index)"))
                        }
                    }
                }
                for _ in 0..<4 {
                    group.addTask {
                        for _ in 0..<50 {
                            let list = try cache.list(IDToken.self)
                            #expect(list.corrupt.isEmpty)
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try cache.list(IDToken.self).records.count == 200)
        }
    }
}

@Suite struct CapacityTests {
    @Test func theMapGrowsToItsCapThenWritesFailWithStorageFullAndEarlierDataStays() throws {
        try withTemporaryDirectory { root in
            let store = TestStore(root: root)
            try KeyFile.create(at: store.keyFile)
            var configuration = store.configuration
            configuration.initialMapSize = 1 << 20
            configuration.maximumMapSize = 4 << 20
            var written = 0
            do {
                let cache = try TokenStore.create(configuration)
                var failure: TokenCacheError? = nil
                while failure == nil && written < 10_000 {
                    do {
                        try cache.put(Samples.idToken(realm: "r\(written)", secret: String(repeating: "t", count: 20_000)))
                        written += 1
                    } catch let error as TokenCacheError {
                        failure = error
                    }
                }
                #expect(failure?.code == .storageFull, "\(String(describing: failure))")
                #expect(written > 50, "the map should have grown past its initial 1 MiB first (wrote \(written))")
                #expect(try cache.info().mapSize > 1 << 20)
                let listing = try cache.list(IDToken.self)
                #expect(listing.records.count == written && listing.corrupt.isEmpty)
                // A batch that does not fit leaves nothing behind.
                let code = errorCode {
                    try cache.write { writer in
                        try writer.put(Samples.account(realm: "batch"))
                        for index in 0..<50 { try writer.put(Samples.idToken(realm: "big\(index)", secret: String(repeating: "u", count: 20_000))) }
                    }
                }
                #expect(code == .storageFull)
                #expect(try cache.get(Samples.account(realm: "batch").key) == nil)
            }
            // The way out is a larger cap (at the cap even deletes can need pages LMDB no longer has).
            configuration.maximumMapSize = 64 << 20
            let reopened = try TokenStore.open(configuration)
            try reopened.put(Samples.account(realm: "after"))
            #expect(try reopened.list(IDToken.self).records.count == written)
        }
    }
}
