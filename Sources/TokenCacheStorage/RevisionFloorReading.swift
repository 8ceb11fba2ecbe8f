/// A transaction that knows a number no revision ever stored in its store has reached: the revision a record written
/// under a key that holds none starts above.
///
/// In a store of files a new record starts at revision 1 (FORMAT.md §5.3). On a shared store (§2.2) hosts refuse a
/// record whose revision is below one they already read under its key, since that is how a server handing back an
/// older row shows; a record deleted and written again at 1 would then be refused as a rollback by every host that
/// saw the deleted one. So a new record there starts above the floor: the schema's row-version sequence, which every
/// write of every row draws from and which therefore has passed every revision written so far.
package protocol RevisionFloorReading {
    /// A number at least as large as every revision any record of the store has had, read in (or, for a planned
    /// write, with the fetch of) this transaction.
    func revisionFloor() throws -> UInt64
}

/// A backend whose store several hosts share through a server, which could hand a host an older row: its write
/// transactions read the revision floor (``RevisionFloorReading``) and its fetches return it when a plan asks
/// (``ReadPlan/readsRevisionFloor``), and the hosts on it check what they read against the highest revisions they saw.
package protocol RevisionFloorKeeping: RecordBackend {
    /// Raises the floor to at least `revision`: for records written into the store as they were sealed elsewhere (a
    /// copy from a directory, whose revisions started at 1 and never drew from the floor), so that a record new under a
    /// key later still starts above every revision copied.
    func raiseRevisionFloor(to revision: UInt64) throws
}
