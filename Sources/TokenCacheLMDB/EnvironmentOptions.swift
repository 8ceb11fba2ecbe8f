/// Settings for `Environment.open`. Only consulted when the environment is actually opened; a second
/// `open` of a store that is already open in this process returns the live instance and its settings.
package struct EnvironmentOptions: Sendable {
    /// `mdb_env_set_maxdbs`: the number of named databases the environment can hold.
    package var maxDatabases: Int = 16
    /// `mdb_env_set_maxreaders`: reader lock-table slots shared by every process using the store.
    /// With `MDB_NOTLS` a slot belongs to a transaction object, and pooled read transactions keep theirs.
    package var maxReaders: Int = 126
    /// Bytes; rounded up to the OS page size. LMDB also never maps less than the data already stored.
    package var initialMapSize: Int = 32 << 20
    /// Growth cap in bytes. A write that needs more than this throws `LMDBError.mapFull`.
    package var maximumMapSize: Int = 8 << 30
    /// Bytes of map beyond `maximumMapSize` that only writes which free space (`WritePurpose.freeingSpace`) may
    /// use: LMDB copies every page a delete touches before it frees any, so at the cap even a delete needs room.
    package var reservedMapSize: Int = 4 << 20
    /// Bytes of disk kept allocated past the used end of `data.mdb` (blocks only; the file's size is unchanged) for
    /// writes that free space: a general write is refused with `LMDBError.noSpace` when they cannot be allocated, so
    /// that on a full disk removals still find room for the pages they copy. 0 turns the reserve off.
    package var reservedDiskSpace: Int = 256 << 10
    /// `MDB_RDONLY`. LMDB still needs write access to `lock.mdb`.
    package var readOnly: Bool = false
    /// How long an open waits for another process's open lock, and a write for another process's writer lock, before
    /// it gives up with `LMDBError.lockTimeout` naming that process (`BoundedFlock`).
    package var lockTimeout: Duration = .seconds(30)

    package init() {}
}

/// What a write transaction is for, as far as room is concerned.
package enum WritePurpose: Sendable {
    /// Any write: the map grows up to `EnvironmentOptions.maximumMapSize`.
    case general
    /// A write that removes records (a delete, a purge, a sign-out): it may also use
    /// `EnvironmentOptions.reservedMapSize`, so that a store at its cap can still be emptied.
    case freeingSpace
}

/// A snapshot of an environment's geometry, for diagnostics (`cachetool info`).
package struct EnvironmentInfo: Sendable {
    /// Current size of the memory map in bytes.
    package let mapSize: Int
    /// LMDB page size in bytes.
    package let pageSize: Int
    /// Number of the highest page in use (`me_last_pgno`).
    package let lastPageNumber: Int
    /// Size of the reader lock table.
    package let maxReaders: Int
    /// Reader slots used, across all processes (`me_numreaders`; a high-water mark, not a live count).
    package let readersInUse: Int
    /// Entries in each named database, from `mdb_stat` in one read transaction.
    /// Empty if that read transaction could not be started.
    package let entries: [String: Int]
}

/// Identity of a store on disk: `(st_dev, st_ino)` of `data.mdb`.
///
/// A path-keyed registry misses symlinks, `..`, hard links and bind mounts; the inode does not.
package struct FileIdentity: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64
}

/// A named database opened once, at environment open (lmdb.h: `mdb_dbi_open` "must not be called from
/// multiple concurrent transactions in the same process"). Immutable afterwards.
package struct Database: Hashable, Sendable {
    package let name: String
    /// The `MDB_dbi`.
    let dbi: UInt32
    /// Serial number of the `Environment` that opened it; a handle from another environment is rejected
    /// with `LMDBError.badDbi` instead of silently addressing an unrelated database.
    let owner: UInt64
}
