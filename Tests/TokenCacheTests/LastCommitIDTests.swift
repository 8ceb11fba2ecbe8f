import Foundation
import TestSupport
import Testing

@testable import TokenCache
@testable import TokenCacheRecords
import TokenCacheStorage

/// `TokenStore.lastCommitID`: what the client's L1 compares a kept answer's snapshot with.
@Suite struct LastCommitIDTests {
    @Test(arguments: [TestBackend.lmdb, .memory])
    func everyCommitChangesItAndALookupReadsTheSnapshotItNames(backend: TestBackend) throws {
        try TestStore.with(backend) { _, store in
            let before = store.lastCommitID
            #expect(try store.silentLookup(Responses.query()).snapshotID == before)
            try store.put(Samples.refreshToken())
            let after = store.lastCommitID
            #expect(after > before)
            #expect(try store.silentLookup(Responses.query()).snapshotID == after)
            // Readable inside a transaction of the same thread (which holds the map's gate already), and a read
            // transaction sees the same commit.
            #expect(try store.read { _ in store.lastCommitID } == after)
            #expect(try store.write { writer in
                try writer.put(Samples.appMetadata())
                return store.lastCommitID
            } == after)
            #expect(store.lastCommitID > after)
        }
    }

    @Test func anotherHandlesCommitChangesIt() throws {
        try TestStore.with { testStore, store in
            let before = store.lastCommitID
            // Another process would write through its own handle and map; here a second handle's write.
            try testStore.rawPut(KeySpace.meta, key: Array("unrelated".utf8), value: [1])
            #expect(store.lastCommitID == before + 1)
        }
    }
}
