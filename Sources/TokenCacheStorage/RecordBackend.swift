/// The storage seam: everything the store asks of the place its sealed records live.
///
/// A backend holds the store's ``KeySpace``s (FORMAT.md §3: `meta` and one per entity kind) of byte keys and byte values,
/// ordered bytewise (`memcmp`, a shorter key before its extensions), and offers snapshot reads and atomic,
/// serialised writes. It knows nothing of entities, encryption or keys: values reach it already sealed, and what it
/// returns is authenticated above it. Two backends implement it: ``LMDBRecordBackend`` (a store directory, shared
/// by processes) and ``InMemoryRecordBackend`` (one process's memory). A third needs only these operations, and a
/// ``StorageLocation`` of its kind for opening and maintaining its stores.
///
/// The operations are the small set the domain uses, of the size of redb's `StorageBackend`: a get that lends the
/// value, a prefix scan and a scan from a key, a count, a snapshot id, a put (of a value, or into a reserved buffer
/// the caller seals in place), and a delete. They are synchronous: a backend across a network would serve a whole
/// lookup's reads in one round trip, which the lookup's shape (a handful of known key ranges) allows.
package protocol RecordBackend: AnyObject, Sendable {
    /// Runs `body` on one consistent snapshot. Readers never wait for writers.
    func read<R>(_ body: (any RecordReading) throws -> R) throws -> R

    /// Runs `body` in one write transaction, committed (durably, where the backend persists) when `body` returns and
    /// rolled back when it throws. Writers are serialised; a write inside a write on the same thread is refused, not
    /// deadlocked. `body` may run more than once (LMDB re-runs it after growing its map), so it must have no effect
    /// outside the transaction.
    /// - Parameter freeingSpace: the write removes records: a backend with a size cap lets it use room kept in
    ///   reserve beyond the cap, so that a full store can still be emptied (a copy-on-write tree needs new pages
    ///   to delete).
    func write<R>(freeingSpace: Bool, _ body: (any RecordWriting) throws -> R) throws -> R

    /// Where the records live, for messages: a directory, or a name for memory.
    var location: String { get }

    /// How this backend prefers a group's only record to be keyed, where the format lets writers choose.
    var lonePlacement: LonePlacement { get }

    /// Size and capacity figures for ``TokenStore/info()``.
    func usage() -> StorageUsage

    /// Identifies the newest committed state, whoever committed it: any commit that changes a record changes it, so
    /// an answer read when it had a value is still the answer while it has that value. Cheap (no transaction).
    var lastCommitID: Int { get }

    /// Layout figures for an operator: per key space, reader slots, files.
    func statistics() throws -> StorageStatistics

    /// Damage below the records that the backend can see (LMDB: its two meta pages), described for an operator;
    /// nil when there is none or the backend has no such layer.
    func integrityProblem() throws -> String?
}

extension RecordBackend {
    /// A write that may add records (``write(freeingSpace:_:)`` with `freeingSpace: false`).
    package func write<R>(_ body: (any RecordWriting) throws -> R) throws -> R {
        try write(freeingSpace: false, body)
    }
}

/// Read access to one snapshot, valid only inside the closure that received it.
///
/// Keys and values are lent as views (`RawSpan`s) into the backend's storage, and a view lives only as long as the
/// callback that received it: `RawSpan` is non-escapable, so the compiler refuses any code that stores one, returns
/// it or captures it in an escaping closure. Read a view where it is lent (`withUnsafeBytes`, or a decoder called
/// inside it); copy what must outlive the callback.
///
/// A backend keeps what it lent valid until this transaction's next write or its end, longer than the callback
/// (LMDB: a view points into the map). One reader relies on that, in one audited place: the silent lookup's bucket
/// read keeps the first two entries of a bucket past the callback and decrypts the chosen one after the walk,
/// through `RawSpan.unsafeBytesValidForTheTransaction` (`Flows/SilentLookupFetch.swift`; an architecture test
/// refuses the escape anywhere else).
package protocol RecordReading {
    /// Calls `body` with the value stored under `key` in `space`; nil when the key is absent.
    func withValue<R>(in space: KeySpace, forKey key: [UInt8], _ body: (RawSpan) throws -> R) throws -> R?

    /// Visits, in key order, the entries whose key starts with `prefix` (all entries for an empty prefix) until
    /// `body` returns false.
    func forEach(
        in space: KeySpace, prefix: [UInt8], _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws

    /// Visits, in key order, the entries whose key is at least `start` until `body` returns false: for work done in
    /// bounded batches, each resuming where the last stopped.
    func forEach(
        in space: KeySpace, from start: [UInt8], _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws

    /// The number of entries in `space`, without reading them.
    func count(in space: KeySpace) throws -> Int

    /// Identifies the committed state this snapshot shows: equal ids, equal contents.
    var snapshotID: Int { get }

    /// What this snapshot's records depend on, bucket by bucket, when it is a fetch from a backend that versions
    /// them so (``BucketVersioning``); nil otherwise, and then only ``snapshotID`` says whether they still hold.
    var bucketStamp: BucketStamp? { get }

    /// A hint that `view`, lent by this transaction, will be read soon (after another step of a scan): the backend
    /// may start loading it. Changes no result.
    func prefetch(_ view: RawSpan)

    /// A hint that the views lent so far will not be read again: a backend that maps its storage may drop the
    /// pages from this process's resident memory (they are read back on the next use). `view` is any view this
    /// transaction lent (it shows a mapping backend where its map is). Changes no result; a long scan calls it now
    /// and then to keep its memory bounded.
    func releaseResidentPages(around view: RawSpan)
}

/// Read-write access inside ``RecordBackend/write(_:)``.
package protocol RecordWriting: RecordReading {
    /// Stores `value` under `key`, replacing any value there.
    func put(in space: KeySpace, key: [UInt8], value: UnsafeRawBufferPointer) throws

    /// Stores a value of `count` bytes under `key`, written by `fill` into the buffer the backend reserved for it (LMDB:
    /// in place in the map), so that a record is sealed straight into its final place.
    func put(in space: KeySpace, key: [UInt8], reservingCount count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws -> Void) throws

    /// Removes the entry under `key`; returns whether there was one.
    @discardableResult
    func delete(in space: KeySpace, key: [UInt8]) throws -> Bool
}

extension RecordReading {
    package var bucketStamp: BucketStamp? { nil }
    package func prefetch(_ view: RawSpan) {}
    package func releaseResidentPages(around view: RawSpan) {}
}

/// Size and capacity of a backend, as the store's `info()` reports them.
package struct StorageUsage: Sendable {
    /// The bytes the backend may grow to before writes fail with `.storageFull`, right now and at most.
    package var currentCapacity: Int
    package var maximumCapacity: Int
    /// The bytes in use.
    package var usedBytes: Int
    package var readersInUse: Int
    package var maxReaders: Int

    package init(currentCapacity: Int, maximumCapacity: Int, usedBytes: Int, readersInUse: Int, maxReaders: Int) {
        self.currentCapacity = currentCapacity
        self.maximumCapacity = maximumCapacity
        self.usedBytes = usedBytes
        self.readersInUse = readersInUse
        self.maxReaders = maxReaders
    }
}

/// Where a writer keys the only record of a group of records that share a key prefix, where the format lets it choose
/// (FORMAT.md §4.3: a bucket's only access token). A property of the backend's layout, not of the records: readers
/// accept either, and a record under the prefix is moved out whenever another joins its group, whatever this says.
package enum LonePlacement: Sendable {
    /// Under the group's prefix itself: a range read positioned at the prefix that lands on exactly the prefix knows
    /// the group holds nothing else and stops (in a B-tree, a second step, often to another page, saved).
    case underPrefix
    /// Under its own full key, as every other record: the backend gains nothing from the shorter key.
    case underOwnKey
}
