internal import TokenCache
internal import TokenCacheRecords
internal import TokenCacheStorage

// Removing the records a predicate selects in bounded transactions, walking a database once in key order: how a
// purge removes expired tokens and how lowering the cap removes the excess.
extension TokenStore {
    /// The most records one purge transaction reads and removes.
    struct PurgeBatch {
        var examined: Int
        var removed: Int
    }

    /// What one transaction of ``removeInBatches(_:where:dryRun:batch:onBatch:)`` did.
    struct RemovalBatch {
        var removed: Int
        var examined: Int
        var corrupt: [CorruptRecord]
    }

    /// Removes every record of a kind that `doomed` selects, in transactions that each read at most `limits.examined`
    /// records and remove at most `limits.removed` (at a full store, fewer: down to one), walking the database once
    /// in key order. `onBatch` hears of each transaction after it committed. In a dry run, counts instead.
    func removeInBatches<S: StorableEntity>(
        _ type: S.Type, where doomed: (S) -> Bool, dryRun: Bool, batch limits: PurgeBatch, onBatch: (RemovalBatch) -> Void
    ) throws {
        var start: [UInt8] = []
        var limits = limits
        while true {
            // One batch: read from `start`, collect the expired, remove them, in one transaction.
            let attempt: (removed: Int, examined: Int, last: [UInt8]?, corrupt: [CorruptRecord])? = try {
                func run(_ reader: CacheReader) throws -> (Int, Int, [UInt8]?, [CorruptRecord]) {
                    var keys: [[UInt8]] = []
                    var examined = 0
                    var last: [UInt8]? = nil
                    var corrupt: [CorruptRecord] = []
                    try reader.mappingErrors {
                        try reader.forEachStored(S.self, from: start) { key, result in
                            examined += 1
                            last = key
                            switch result {
                            case .success(let stored):
                                if doomed(stored.entity) { keys.append(key) }
                            case .failure(let damaged):
                                corrupt.append(damaged)
                            }
                            return examined < limits.examined && keys.count < limits.removed
                        }
                    }
                    // The map stays mapped between transactions: let this batch's pages go, so that a purge of a
                    // large store does not end up holding the whole file in memory.
                    reader.releaseScannedPages()
                    guard let writer = reader as? CacheWriter else { return (keys.count, examined, last, corrupt) }
                    let removed = try writer.mappingErrors { try writer.deleteRecords(S.self, keys: keys) }
                    // Deleting reads the pages around each record too (and LMDB merges half-empty ones): those go as well.
                    writer.releaseScannedPages()
                    return (removed, examined, last, corrupt)
                }
                guard !dryRun else { return try read(run) }
                do {
                    return try removing(run)
                } catch let error as TokenCacheError where [.storageFull, .ioFailure].contains(error.code) && limits.removed > 1 {
                    // Even the reserve a removal may use is too small for this many deletes at once (a store at
                    // its cap, or a full disk, where LMDB reports a write cut short as an I/O error): fewer per
                    // transaction, down to one, which fails for real if the cause was another.
                    limits.removed /= 2
                    limits.examined = max(limits.examined / 2, limits.removed)
                    return nil
                }
            }()
            guard let batch = attempt else { continue }
            onBatch(RemovalBatch(removed: batch.removed, examined: batch.examined, corrupt: batch.corrupt))
            guard let last = batch.last else { return }
            // A dry run removes nothing, so nothing moves.
            start = Self.resumeKey(after: last, removedAny: !dryRun && batch.removed > 0, kind: S.kind)
        }
    }

    /// Where the next batch starts: right after `last`, or, for an access token when the batch removed any, at the
    /// start of `last`'s bucket. Removing a token can leave one other in its bucket, which then moves under the bucket
    /// prefix (FORMAT.md §4.3), ahead of `last`, though it may not have been examined yet. Only a batch that removed
    /// something steps back, so every batch either removes a record or moves past one: the purge ends.
    static func resumeKey(after last: [UInt8], removedAny: Bool, kind: EntityKind) -> [UInt8] {
        if kind == .accessToken, removedAny, last.count > RecordStore.bucketPrefixCount {
            return Array(last.prefix(RecordStore.bucketPrefixCount))
        }
        return last + [0]
    }
}

extension CacheReader {
    /// Visits, in key order from `start` (inclusive), every record of a kind with its storage key, until `body`
    /// returns false.
    func forEachStored<S: StorableEntity>(
        _ type: S.Type, from start: [UInt8], _ body: ([UInt8], Result<StoredEntity<S>, CorruptRecord>) throws -> Bool
    ) throws {
        try transaction.forEach(in: KeySpace(S.kind), from: start) { key, value in try key.withUnsafeBytes { key in try value.withUnsafeBytes { value in
            let storageKey = Array(key)
            return try body(storageKey, store.decode(S.self, value: value, key: storageKey))
        } } }
    }
}
