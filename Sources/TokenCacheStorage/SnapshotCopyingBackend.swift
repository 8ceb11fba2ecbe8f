/// An open backend that writes a consistent copy of its store to another location while other processes go on
/// reading and writing: what a backup needs. A kind whose store is not kept anywhere a copy could be taken from (memory)
/// does not adopt it, and ``RecordBackend/snapshotCopying(kind:)`` refuses a backup on it.
///
/// A database server would adopt it with a copy of one snapshot (`REPEATABLE READ`) into other tables or another
/// database, as `pg_dump` does.
package protocol SnapshotCopyingBackend: RecordBackend {
    /// Writes every record of one snapshot (the records of one committed write, none of a later one) as a new store at
    /// `destination`, a location of this backend's kind that holds no store yet, with no free space carried over. The
    /// copy holds the same header, so the same key opens it. Either the whole copy is at `destination` afterwards or
    /// none of it is.
    ///
    /// Key order: LMDB's compacting copy walks each B-tree depth first and writes its pages as it leaves them, so the
    /// copy's leaf pages lie in key order, each tree's after the one before it: a scan of the copy reads its file
    /// forwards. Nothing more is needed for backup or compaction to write in key order.
    /// - Parameter progress: Receives the bytes written so far, now and then, from another thread.
    /// - Returns: The size of the copy in bytes.
    /// - Throws: ``StorageError``: `.invalidArgument` when `destination` is of another kind or already holds a copy,
    ///   `.storageFull` and `.ioFailure` from writing (nothing is left behind then).
    func copy(to destination: any StorageLocation, progress: (@Sendable (Int) -> Void)?) throws -> Int
}

extension RecordBackend {
    /// This backend as one that copies its store while in use, or `.unsupportedEnvironment` naming the capability and
    /// `kind` (the kind of the location it was opened from).
    package func snapshotCopying(kind: String) throws(StorageError) -> any SnapshotCopyingBackend {
        guard let copying = self as? any SnapshotCopyingBackend else { throw .unsupported(.snapshotCopy, kind: kind, location: location) }
        return copying
    }
}
