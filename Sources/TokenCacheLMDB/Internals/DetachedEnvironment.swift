import CLMDB

/// An `MDB_env` opened without LMDB's lock table (`MDB_NOLOCK`) and outside the registry, for compaction: the store
/// read-only, and the data file its copy is written to.
///
/// Compaction holds the store exclusively (``LockTableExclusion``: no other process has it open and no LMDB opener can
/// start), so reading it needs no lock table. And it must not use one: LMDB would open and later close its own
/// descriptor of `lock.mdb` in this process, and closing any descriptor of a file drops every `fcntl` lock the process
/// holds on it, the exclusion among them. The same shape opens a data file by itself (`MDB_NOSUBDIR`): the compacted
/// copy, checked before it is put in place.
struct DetachedEnvironment: ~Copyable {
    let handle: OpaquePointer

    /// Opens the environment in the directory `path`, or the data file `path` when `isDataFile`; refuses a data file
    /// shorter than its last page (reading past its end would be a SIGBUS), as ``Environment/open`` does.
    init(path: String, isDataFile: Bool, maxDatabases: Int) throws(LMDBError) {
        var pointer: OpaquePointer?
        try LMDBError.check(lmdb_env_create(&pointer))
        guard let env = pointer else { throw .outOfMemory }
        do throws(LMDBError) {
            try LMDBError.check(lmdb_env_set_maxdbs(env, UInt32(maxDatabases)))
            var flags = UInt32(MDB_RDONLY) | UInt32(MDB_NOLOCK) | UInt32(MDB_NOTLS)
            if isDataFile { flags |= UInt32(MDB_NOSUBDIR) }
            try LMDBError.check(lmdb_env_open(env, path, flags, 0o600))
            guard let fd = lmdb_env_get_fd(env) else { throw .invalidArgument }
            let lastPage = Int(lmdb_env_info(env).me_last_pgno)
            let pageSize = lmdb_env_page_size(env)
            guard pageSize > 0,
                  Environment.isTolerablyShort(fileSize: try FileSystem.status(of: fd).size, lastPage: lastPage, pageSize: pageSize)
            else { throw .truncatedDataFile }
        } catch {
            lmdb_env_close(env)
            throw error
        }
        handle = env
    }

    /// Opens the empty data file `path` (created by the caller, exclusively, mode 0600) to write a copy into: no lock
    /// table, no sync per commit (the copy is synced once, whole, before anyone uses it), a map of `mapSize` bytes.
    init(writingDataFile path: String, maxDatabases: Int, mapSize: Int) throws(LMDBError) {
        var pointer: OpaquePointer?
        try LMDBError.check(lmdb_env_create(&pointer))
        guard let env = pointer else { throw .outOfMemory }
        do throws(LMDBError) {
            try LMDBError.check(lmdb_env_set_maxdbs(env, UInt32(maxDatabases)))
            try LMDBError.check(lmdb_env_set_mapsize(env, mapSize))
            let flags = UInt32(MDB_NOSUBDIR) | UInt32(MDB_NOLOCK) | UInt32(MDB_NOTLS) | UInt32(MDB_NOSYNC)
            try LMDBError.check(lmdb_env_open(env, path, flags, 0o600))
        } catch {
            lmdb_env_close(env)
            throw error
        }
        handle = env
    }

    deinit {
        lmdb_env_close(handle)
    }

    /// The map size the environment was written with (its meta page's), which a copy keeps.
    var mapSize: Int { Int(lmdb_env_info(handle).me_mapsize) }

    /// Copies every entry of the databases `names` into `destination` (``copyInKeyOrder(from:_:to:batch:)``), from one
    /// read transaction of this environment.
    func copyInKeyOrder(_ names: [String], to destination: borrowing DetachedEnvironment) throws(LMDBError) {
        var pointer: OpaquePointer?
        try LMDBError.check(lmdb_txn_begin(handle, readOnly: true, &pointer))
        guard let source = pointer else { throw .invalidArgument }
        defer { lmdb_txn_abort(source) }
        try Self.copyInKeyOrder(from: source, names, to: destination)
    }

    /// Copies every entry of the databases `names` that the read transaction `source` sees into `destination`, database
    /// by database in key order, each entry appended (`MDB_APPEND`), so that every leaf page of the copy is filled
    /// before the next begins: a store whose keys arrived in random order (blind-index keys do) has pages a third
    /// empty, which a page-for-page copy (LMDB's own, compacting or not) keeps. Commits every `batch` entries, so that
    /// the dirty pages a transaction holds stay bounded; then syncs the copy.
    static func copyInKeyOrder(
        from source: OpaquePointer, _ names: [String], to destination: borrowing DetachedEnvironment, batch: Int = 4096
    ) throws(LMDBError) {
        for name in names {
            var sourceDatabase: UInt32 = 0
            try LMDBError.check(lmdb_dbi_open(source, name, create: false, &sourceDatabase))
            var cursorPointer: OpaquePointer?
            try LMDBError.check(lmdb_cursor_open(source, sourceDatabase, &cursorPointer))
            guard let cursor = cursorPointer else { throw .invalidArgument }
            defer { lmdb_cursor_close(cursor) }
            var writing: OpaquePointer? = nil
            defer { if let writing { lmdb_txn_abort(writing) } }
            func begin() throws(LMDBError) -> OpaquePointer {
                var txn: OpaquePointer?
                try LMDBError.check(lmdb_txn_begin(destination.handle, readOnly: false, &txn))
                guard let txn else { throw .invalidArgument }
                return txn
            }
            func commit() throws(LMDBError) {
                guard let full = writing else { return }
                writing = nil  // freed by the commit, whether or not it succeeds
                try LMDBError.check(lmdb_txn_commit(full))
            }
            writing = try begin()
            // Created even when empty: every database of the store exists in its copy.
            var targetDatabase: UInt32 = 0
            try LMDBError.check(lmdb_dbi_open(writing!, name, create: true, &targetDatabase))
            var key = MDB_val(), value = MDB_val()
            var rc = lmdb_cursor_get(cursor, &key, &value, .first)
            var inBatch = 0
            while rc == MDB_SUCCESS {
                try LMDBError.check(lmdb_put_appending(writing!, targetDatabase, &key, &value))
                inBatch += 1
                if inBatch == batch {
                    try commit()
                    writing = try begin()
                    inBatch = 0
                }
                rc = lmdb_cursor_get(cursor, &key, &value, .next)
            }
            guard rc == MDB_NOTFOUND else { throw LMDBError(code: rc) }
            try commit()
        }
        try LMDBError.check(lmdb_env_sync(destination.handle))
    }

    /// The number of entries in each named database, from one read transaction. A missing database is `.notFound`.
    func entryCounts(_ names: [String]) throws(LMDBError) -> [String: Int] {
        var pointer: OpaquePointer?
        try LMDBError.check(lmdb_txn_begin(handle, readOnly: true, &pointer))
        guard let txn = pointer else { throw .invalidArgument }
        defer { lmdb_txn_abort(txn) }
        var counts: [String: Int] = [:]
        for name in names {
            var dbi: UInt32 = 0
            try LMDBError.check(lmdb_dbi_open(txn, name, create: false, &dbi))
            var stat = MDB_stat()
            try LMDBError.check(lmdb_stat(txn, dbi, &stat))
            counts[name] = Int(stat.ms_entries)
        }
        return counts
    }

}
