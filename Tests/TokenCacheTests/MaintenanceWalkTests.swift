import Testing
import TokenCacheStorage

@testable import TokenCache
import TokenCacheRecords

/// Bulk jobs in bounded, resumable write transactions.
@Suite struct MaintenanceWalkTests {
    struct Crash: Error {}

    /// One batch: copies up to `limit` records of `accounts` from `start` into `id_tokens`; the key after them, or
    /// nil at the end.
    static func copyBatch(from start: [UInt8], limit: Int, in txn: any RecordWriting, visited: inout [[UInt8]]) throws -> [UInt8]? {
        var batch: [([UInt8], [UInt8])] = []
        var next: [UInt8]? = nil
        try txn.forEach(in: KeySpace.accounts, from: start) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
            if batch.count == limit {
                next = Array(key)
                return false
            }
            batch.append((Array(key), Array(value)))
            return true
        } } }
        for (key, value) in batch {
            try value.withUnsafeBytes { try txn.put(in: KeySpace.idTokens, key: key, value: $0) }
            visited.append(key)
        }
        return next
    }

    @Test(arguments: TestBackend.allCases)
    func aWalkInterruptedBetweenBatchesResumesWhereItStoppedAndEndsByRemovingItsCursor(backend: TestBackend) throws {
        try TestStore.with(backend) { store, cache in
            let keys = (0..<10).map { [0x42, UInt8($0)] }
            for key in keys { try store.rawPut(KeySpace.accounts, key: key, value: key + [0xFF]) }
            let walk = MaintenanceWalk(cursorKey: Array("test-walk".utf8))
            try cache.store.backend.write { try walk.begin(in: $0) }
            #expect(try cache.store.backend.read { try walk.isPending(in: $0) })

            var visited: [[UInt8]] = []
            var batches = 0
            #expect(throws: Crash.self) {
                try walk.run(on: cache.store) { start, txn in
                    batches += 1
                    if batches == 2 { throw Crash() }  // the second transaction dies: its batch is rolled back
                    return try Self.copyBatch(from: start, limit: 3, in: txn, visited: &visited)
                }
            }
            #expect(visited == Array(keys[0..<3]))
            #expect(try store.rawEntries(KeySpace.idTokens).map(\.0) == Array(keys[0..<3]))
            #expect(try cache.store.backend.read { try walk.isPending(in: $0) })

            try walk.run(on: cache.store) { start, txn in try Self.copyBatch(from: start, limit: 3, in: txn, visited: &visited) }
            #expect(visited == keys)  // each record once: the resumed walk started after the committed batch
            #expect(try store.rawEntries(KeySpace.idTokens).map(\.1) == keys.map { $0 + [0xFF] })
            #expect(try !cache.store.backend.read { try walk.isPending(in: $0) })
            // A finished walk is a no-op.
            try walk.run(on: cache.store) { _, _ in
                Issue.record("a finished walk ran a batch")
                return nil
            }
        }
    }
}
