/// Where a store's records are kept and by which kind of backend, whether or not the store is open: what opening a
/// store, and the maintenance of one, ask of storage beyond the records (``RecordBackend``).
///
/// The library makes one from its configuration in one place, and reaches storage through it and the backends it
/// opens, never around them: no file name, path rule or backend type of a kind is spelled above this module, so that a
/// new kind (a shared store on a database server, say) plugs in where the configuration chooses and nowhere else.
///
/// Every kind offers these requirements. Maintenance that some kinds cannot offer is a capability of its own
/// (``StorageCapability``): ``CompactingStorage`` and ``QuarantiningStorage`` here, for a store no process has open,
/// and ``SnapshotCopyingBackend`` on an open backend. An operation that needs one a kind lacks is refused with
/// `.unsupportedEnvironment` naming it (``compacting()``, ``quarantining()``), before it changes anything.
///
/// What needs nothing here: rekeying and data-key rotation are ordinary write transactions on the `meta` key space
/// (the header, a cursor) and on the records they re-seal; verification and salvage read through ordinary read
/// transactions, one key range at a time, so that a backend fails a damaged range and not the store (LMDB may crash
/// instead, which salvage's progress journal survives).
package protocol StorageLocation: Sendable {
    /// Where, for messages: a directory, `:memory:`. Never a credential (a remote kind names its server and database,
    /// not its password).
    var location: String { get }

    /// The kind of backend, for messages: `LMDB`, `in-memory`.
    var kind: String { get }

    /// The directory that holds the store's files, which the library keeps its user's alone (it creates it 0700, and
    /// checks it and every file in ``files`` that exists before it opens a store); nil for a kind without files.
    var directory: String? { get }

    /// The files a store here consists of, whether they exist yet or not; none for a kind without files.
    var files: [StoreFile] { get }

    /// Whether a store is here (LMDB: its data file exists), without opening it: an open of a place without one is
    /// `.storeNotFound`, and a backup or salvage refuses a destination with one. A kind whose every store is new (memory)
    /// never holds one before it is created.
    func holdsStore() -> Bool

    /// The bytes the records take at rest, without opening the store (LMDB: its data file's size), for a compaction's
    /// progress and the benchmark's figures; nil when there is no such figure or no store.
    func sizeAtRest() -> Int?

    /// A location of the same kind, with the same options, at `location`: where a backup or a salvage writes a store
    /// that the same key opens, and where that copy is opened again to be read back.
    func relocated(to location: String) -> any StorageLocation

    /// Opens the store here, with every ``KeySpace``.
    /// - Parameters:
    ///   - readOnly: Opens it for reading only.
    ///   - create: May make the store's storage when there is none. A kind whose storage is made by opening it (LMDB,
    ///     in a directory that exists) makes it whenever it may write; memory makes a new, empty store only then.
    /// - Throws: ``StorageError``: `.storeNotFound` when there is no store and `create` is not set, and the kind's own.
    func open(readOnly: Bool, create: Bool) throws(StorageError) -> any RecordBackend
}

extension StorageLocation {
    /// This location as one that compacts a store in place, or `.unsupportedEnvironment` naming the capability.
    package func compacting() throws(StorageError) -> any CompactingStorage {
        guard let compacting = self as? any CompactingStorage else { throw .unsupported(.compaction, kind: kind, location: location) }
        return compacting
    }

    /// This location as one that moves a store aside whole, or `.unsupportedEnvironment` naming the capability.
    package func quarantining() throws(StorageError) -> any QuarantiningStorage {
        guard let quarantining = self as? any QuarantiningStorage else { throw .unsupported(.quarantine, kind: kind, location: location) }
        return quarantining
    }

    /// The file of ``files`` that holds the records, if the kind keeps them in one.
    package var recordsFile: StoreFile? { files.first { $0.role == .records } }
}
