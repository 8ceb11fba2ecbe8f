import Foundation
public import TokenCache
internal import TokenCacheStorage
internal import TokenCacheRecords

extension TokenStore {
    /// Rewrites the store in `configuration`'s directory compacted and swaps it in, so that its data file shrinks to
    /// the records it holds (LMDB never gives freed pages back to the filesystem; it reuses them).
    ///
    /// It needs the store to itself, because a process that has the old file open would go on writing into it after
    /// the swap, and those writes would be lost. So it refuses, changing nothing, while any process (this one
    /// included) has the store open, and names that process; and while it runs, every process that opens the store
    /// waits. The swap is a `rename` of the compacted file, fsynced first, over `data.mdb`: a crash at any moment
    /// leaves either the old store or the compacted one, both with the same records; a leftover temporary
    /// `data.mdb.compacting` is removed by the next compaction. No key is needed (sealed records are copied as they
    /// are), only the store's files, which must be this user's alone.
    ///
    /// - Parameters:
    ///   - configuration: Where the store is (its key source is not used).
    ///   - progress: Called now and then from another thread with the bytes of the compacted file written so far and
    ///     the store's size before.
    /// - Returns: The data file's size before and after, the records of each kind, how long it took.
    /// - Throws: ``TokenCacheError``: `.storeInUse` when a process has the store open; `.storeNotFound`;
    ///   `.insecurePermissions`; `.unsupportedEnvironment` for a store whose backend cannot compact (in memory: the
    ///   message names the capability) or on a network filesystem;
    ///   `.corruptStore` for a damaged store (or a copy that does not hold what it holds); `.storageFull` when the disk
    ///   has no room for the copy; `.ioFailure`. Whenever it throws, the store is as it was.
    public static func compact(
        _ configuration: Configuration, progress: (@Sendable (_ written: Int, _ sizeBefore: Int) -> Void)? = nil
    ) throws -> CompactReport {
        let started = Date()
        let directory = configuration.directory
        do {
            let storage = configuration.storage
            let compacting = try storage.compacting()
            try RecordStore.checkExistingStore(storage)
            let before = storage.sizeAtRest() ?? 0
            var relay: (@Sendable (Int) -> Void)? = nil
            if let progress { relay = { written in progress(written, before) } }
            let outcome = try compacting.compact(progress: relay)
            var counts: [EntityKind: Int] = [:]
            for kind in EntityKind.allCases { counts[kind] = outcome.entries[KeySpace(kind)] ?? 0 }
            return CompactReport(
                directory: directory, sizeBefore: outcome.sizeBefore, sizeAfter: outcome.sizeAfter, recordCounts: counts,
                duration: Date().timeIntervalSince(started)
            )
        } catch { throw TokenCacheError.wrap(error, directory: directory) }
    }
}

/// What ``TokenStore/compact(_:progress:)`` did.
public struct CompactReport: Sendable {
    /// The store directory, as configured.
    public var directory: String
    /// The size of the data file before and after, in bytes.
    public var sizeBefore: Int
    public var sizeAfter: Int
    /// The records of each kind, the same before and after.
    public var recordCounts: [EntityKind: Int]
    /// How long it took, in seconds.
    public var duration: Double
}
