/// A location whose store can be moved aside whole, under a new name, so that a new store can be made in its place
/// while the old one stays for a later look or a salvage: what `quarantine` needs. The move must be atomic (the store
/// is under its old name or its new one, never half moved) and refused while any process has the store open (a process
/// that has it open would go on writing into the moved store). Memory has nothing to keep aside and does not adopt it;
/// a database server could (renaming the store's schema), or leave it out and have quarantine refused.
package protocol QuarantiningStorage: StorageLocation {
    /// Moves the store here to `target`, a place beside it, of this kind, where nothing is yet.
    /// - Throws: ``StorageError``: `.storeInUse` naming the process that has the store open, `.storeNotFound` without
    ///   a store, `.invalidArgument` when `target` exists, `.ioFailure`.
    func moveAside(to target: String) throws(StorageError)
}
