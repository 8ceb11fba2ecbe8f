/// A location whose store can be rewritten in place without its free space, while no process has it open: what
/// `compact` needs. A copy-on-write tree (LMDB) never gives freed pages back to the filesystem, so this is how its
/// file shrinks. Memory has nothing to give back and does not adopt it; a database server would adopt it with its own
/// rewrite (PostgreSQL's `VACUUM FULL` of the store's tables).
package protocol CompactingStorage: StorageLocation {
    /// Rewrites the store here compacted and puts it in place of the old one, once no process (this one included) has
    /// it open; every process that opens it meanwhile waits. The store is unchanged whenever it throws, and a crash at
    /// any moment leaves the old store or the compacted one, with the same records.
    /// Every key space must hold as many entries after as before.
    /// - Parameters:
    ///   - progress: Receives the bytes of the compacted copy written so far, now and then, from another thread.
    /// - Throws: ``StorageError``: `.storeInUse` naming the process that has the store open, `.storeNotFound`,
    ///   `.corruptStore` (a key space is missing, or the copy does not hold what the store holds), `.storageFull`,
    ///   `.ioFailure`, and the kind's own (`.unsupportedEnvironment` for LMDB on a network filesystem).
    func compact(progress: (@Sendable (Int) -> Void)?) throws(StorageError) -> StorageCompaction
}

/// What ``CompactingStorage/compact(progress:)`` did.
package struct StorageCompaction: Sendable, Equatable {
    /// The store's size at rest before and after, in bytes.
    package var sizeBefore: Int
    package var sizeAfter: Int
    /// The entries of each key space, the same before and after.
    package var entries: [KeySpace: Int]

    package init(sizeBefore: Int, sizeAfter: Int, entries: [KeySpace: Int]) {
        self.sizeBefore = sizeBefore
        self.sizeAfter = sizeAfter
        self.entries = entries
    }
}
