import CLMDB

/// An `MDB_env` opened read-only without LMDB's lock table (`MDB_NOLOCK`) and outside the registry, for compaction.
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

    deinit {
        lmdb_env_close(handle)
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

    /// `mdb_env_copyfd2` with `MDB_CP_COMPACT` into `fd`, from its current offset.
    func copyCompacted(to fd: Int32) throws(LMDBError) {
        try LMDBError.check(lmdb_env_copyfd(handle, fd, compact: true))
    }
}
