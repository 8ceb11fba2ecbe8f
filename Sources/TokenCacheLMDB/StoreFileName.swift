/// The files of a store directory, by name (FORMAT.md §2): LMDB's two, in its default sub-directory layout, and the
/// two locks this library adds. One list, so that what opens, copies, compacts, moves aside, measures and checks a
/// store names the same files; the storage module hands them on (`StoreFile`), and nothing above it spells them.
package enum StoreFileName {
    /// LMDB's data file: the meta pages and every B-tree. Its existence says a store is there.
    package static let data = "data.mdb"
    /// LMDB's lock table: reader slots, the writer mutex, the last committed transaction id.
    package static let lockTable = "lock.mdb"
    /// Serialises openers (`OpenLock`).
    package static let openLock = "open.lock"
    /// Serialises writers ahead of LMDB's mutex (`WriterLock`).
    package static let writerLock = "writer.lock"

    /// Every file a store directory may hold while it is a store, in that order.
    package static let all = [data, lockTable, openLock, writerLock]
}
