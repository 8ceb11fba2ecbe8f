import CLMDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process-wide registry of open environments, keyed by `(st_dev, st_ino)` of `data.mdb`.
///
/// lmdb.h: "Do not have open an LMDB database twice in the same process at the same time. Not even from a
/// plain open() call - close()ing it breaks fcntl() advisory locking." Opening the same store again (by
/// another path, a symlink, `x/../x`, a hard link or a bind mount) returns the live instance instead.
///
/// The lock is held for the whole of an open, and `deinit` closes the `MDB_env` under the same lock, so a
/// new environment on a file is never created while the previous one on that file is still closing.
private enum Registry {
    struct Entry: Sendable {
        weak var environment: Environment?
        let serial: UInt64
        let directory: String
    }

    static let entries = Mutex<[FileIdentity: Entry]>([:])
    static let nextSerial = Atomic<UInt64>(1)
}

extension Environment {
    /// Opens (or returns the already-open shared instance of) the LMDB environment in `directory`.
    ///
    /// * `directory` must exist (create it with mode 0700); `data.mdb` and `lock.mdb` are created in it if
    ///   missing, with mode 0600, and re-set to exactly 0600 afterwards (umask-independent) unless read-only.
    /// * Flags: `MDB_NOTLS` always, `MDB_RDONLY` if `options.readOnly`. Never `MDB_WRITEMAP` (a full disk
    ///   gives SIGBUS instead of `ENOSPC`), `MDB_NOSYNC`, `MDB_NOMETASYNC`, `MDB_MAPASYNC` (durability) or
    ///   `MDB_NOMEMINIT` ("Applications handling sensitive data which must not be written should not use
    ///   this flag").
    /// * `mdb_env_open` runs under an exclusive `flock` on `open.lock` in `directory` (created mode 0600), so that
    ///   no two processes of this library are inside it at once (`OpenLock` says why).
    /// * Every name in `databases` is opened once, here, in one transaction (created unless read-only).
    /// * An environment of the same store already open in this process is returned as is; it must have been
    ///   opened with the same database names (in any order), and a read-only instance does not satisfy a
    ///   read-write request. Otherwise `LMDBError.invalidArgument`.
    /// * Stale reader slots are cleared with `mdb_reader_check` (`staleReadersCleared`).
    /// * `data.mdb` shorter than `(last_pgno + 1) * pagesize` is refused before any page is touched
    ///   (`LMDBError.truncatedDataFile`): accessing a mapped page past the end of the file raises SIGBUS. A file
    ///   short by at most `tolerableShortfallPages` whole pages is the trace of unwritten loose pages, not
    ///   truncation: it is accepted, and padded to its full length when opened writable.
    ///
    /// - Throws: `LMDBError.unsupportedLibraryVersion` on liblmdb 0.9.26...0.9.31; `.invalid` for a file that
    ///   is not an LMDB store; `.truncatedDataFile`; `.notFound` for a missing database in read-only mode;
    ///   `.busy` if `data.mdb` of an environment open in this process was replaced; errno-based errors.
    package static func open(
        directory: String,
        databases: [String],
        options: EnvironmentOptions = .init()
    ) throws(LMDBError) -> Environment {
        try checkLibraryVersion()
        try validate(options)
        let names = try validatedNames(databases)
        let resolved = try FileSystem.resolvedPath(directory)
        guard FileSystem.isDirectory(resolved) else { throw .invalidArgument }
        let dataPath = resolved + "/" + StoreFileName.data

        enum Lookup {
            case opened(Environment)
            case existing(Environment)
            case closing
        }
        while true {
            // Strong references loaded under the lock are returned out of it, so that if one turns out to
            // be the last reference, `deinit` (which takes this lock) runs after the lock is released.
            let lookup = try Registry.entries.withLock { (entries) throws(LMDBError) -> Lookup in
                if let identity = FileSystem.identity(at: dataPath), let entry = entries[identity] {
                    if let live = entry.environment { return .existing(live) }
                    return .closing  // deinit is running; it removes the entry after mdb_env_close
                }
                if entries.values.contains(where: { $0.directory == resolved }) {
                    throw .busy  // open here, but data.mdb is no longer the file it has open
                }
                let serial = Registry.nextSerial.wrappingAdd(1, ordering: .relaxed).oldValue
                let environment = try openNew(directory: resolved, names: names, options: options, serial: serial)
                entries[environment.identity] = Registry.Entry(
                    environment: environment, serial: serial, directory: resolved
                )
                return .opened(environment)
            }
            switch lookup {
            case .opened(let environment):
                return environment
            case .existing(let environment):
                guard Set(environment.databases.keys) == Set(names) else { throw .invalidArgument }
                guard !environment.options.readOnly || options.readOnly else { throw .invalidArgument }
                return environment
            case .closing:
                usleep(100)
            }
        }
    }

    /// Whether this process has an environment open, opening or closing on the store in `directory` (resolved).
    ///
    /// Never waits for the registry's lock, which an open holds while it waits for the store's open lock: a caller
    /// that holds that lock (compaction) would wait forever. A registry still locked after a second counts as in use.
    static func isInUseInThisProcess(directory: String) -> Bool {
        for _ in 0..<100 {
            let found = Registry.entries.withLockIfAvailable { entries in
                entries.values.contains { $0.directory == directory }
            }
            if let found { return found }
            usleep(10_000)
        }
        return true
    }

    /// Called from `deinit`. `handle` is nil in a forked child, which must not close the parent's environment.
    static func closeAndUnregister(handle: OpaquePointer?, identity: FileIdentity, serial: UInt64) {
        Registry.entries.withLock { entries in
            if let handle { lmdb_env_close(handle) }
            if entries[identity]?.serial == serial { entries[identity] = nil }
        }
    }

    // MARK: Opening a new MDB_env

    private static func openNew(
        directory: String,
        names: [String],
        options: EnvironmentOptions,
        serial: UInt64
    ) throws(LMDBError) -> Environment {
        var envPointer: OpaquePointer?
        try LMDBError.check(lmdb_env_create(&envPointer))
        guard let env = envPointer else { throw .outOfMemory }
        do throws(LMDBError) {
            try LMDBError.check(lmdb_env_set_maxdbs(env, UInt32(options.maxDatabases)))
            try LMDBError.check(lmdb_env_set_maxreaders(env, UInt32(options.maxReaders)))
            try LMDBError.check(lmdb_env_set_mapsize(env, roundUpToOSPage(options.initialMapSize)))
            var flags = UInt32(MDB_NOTLS)
            if options.readOnly { flags |= UInt32(MDB_RDONLY) }
            // Serialised with every other opener of this library (see `OpenLock`): an opener killed inside
            // mdb_env_open must never leave LMDB's lock table half-initialised to processes waiting behind it.
            let openLock = try OpenLock.acquire(directory: directory, readOnly: options.readOnly, timeout: options.lockTimeout)
            // LMDB takes an empty data file for a new environment and writes its meta pages, which a read-only
            // open cannot do (it fails with EBADF). A store's data file is never empty once its creator's open
            // returned, and creators finish under the open lock, so this one is truncated.
            if options.readOnly, FileSystem.size(at: directory + "/" + StoreFileName.data) == 0 { throw .truncatedDataFile }
            // A missing or short lock.mdb is sized by LMDB with ftruncate (a sparse file) and initialised through its
            // mapping: on a full filesystem that first write is a SIGBUS. Allocated beforehand, a full disk is ENOSPC
            // instead. (An existing lock file is left alone: a full disk must not stop a store from being read, or
            // written in its free pages.) Safe to open here: this store is not open in this process (the registry),
            // so no fcntl lock of ours is on the file.
            let lockPath = directory + "/" + StoreFileName.lockTable, lockLength = Self.lockFileLength(maxReaders: options.maxReaders)
            if FileSystem.size(at: lockPath) ?? 0 < lockLength {
                do {
                    try FileSystem.preallocate(path: lockPath, length: lockLength)
                } catch where options.readOnly && error != .noSpace {
                    // A read-only opener may lack write access to the lock file; LMDB reports that itself.
                }
            }
            let openRC = lmdb_env_open(env, directory, flags, 0o600)
            _ = consume openLock
            try LMDBError.check(openRC)

            guard let fd = lmdb_env_get_fd(env) else { throw .invalidArgument }
            if !options.readOnly {
                try FileSystem.setOwnerOnlyMode(fd: fd)
                try FileSystem.setOwnerOnlyMode(path: directory + "/" + StoreFileName.lockTable)
            }

            // Preflight before any data page is read: mdb_env_open itself reads only the two meta pages
            // (with pread), but a B-tree page beyond the end of the file would be a SIGBUS, not an error.
            // The last page first, then the size: another process may commit in between, which only moves both
            // up, and the file never shrinks; the other order mistook a healthy store for a truncated one.
            let lastPage = Int(lmdb_env_info(env).me_last_pgno)
            let (identity, fileSize) = try FileSystem.status(of: fd)
            let pageSize = lmdb_env_page_size(env)
            guard pageSize > 0,
                  Self.isTolerablyShort(fileSize: fileSize, lastPage: lastPage, pageSize: pageSize)
            else { throw .truncatedDataFile }

            var dead: Int32 = 0
            try LMDBError.check(lmdb_reader_check(env, &dead))

            let dbis = try openDatabases(env, names: names, readOnly: options.readOnly, directory: directory, lockTimeout: options.lockTimeout)
            var databases: [String: Database] = [:]
            for (name, dbi) in zip(names, dbis) {
                databases[name] = Database(name: name, dbi: dbi, owner: serial)
            }
            let environment = Environment(
                handle: env,
                directory: directory,
                identity: identity,
                staleReadersCleared: Int(dead),
                options: options,
                databases: databases,
                serial: serial,
                maxKeySize: lmdb_env_get_maxkeysize(env)
            )
            if !options.readOnly { environment.withSharedGate { environment.padDataFileIfShort(takingWriterLock: true) } }
            return environment
        } catch {
            // lmdb.h, mdb_env_open: "If this function fails, mdb_env_close() must be called to discard the
            // MDB_env handle." The same holds for every later step: nothing else will close it.
            lmdb_env_close(env)
            throw error
        }
    }

    /// Opens every named database, before the environment is shared. A store whose databases all exist (every store
    /// once created) has them opened in a read transaction, which waits for no writer; only a new one is given them
    /// in a write transaction, under the writer lock like every write (`WriterLock`: a writer stopped inside its
    /// transaction holds LMDB's writer mutex, which cannot be waited on for a bounded time).
    private static func openDatabases(
        _ env: OpaquePointer, names: [String], readOnly: Bool, directory: String, lockTimeout: Duration
    ) throws(LMDBError) -> [UInt32] {
        if readOnly { return try openDatabasesInOneTransaction(env, names: names, readOnly: true) }
        do { return try openDatabasesInOneTransaction(env, names: names, readOnly: true) } catch .notFound {}
        let writerLock = try WriterLock.acquire(directory: directory, timeout: lockTimeout)
        defer { writerLock.release() }
        return try openDatabasesInOneTransaction(env, names: names, readOnly: false)
    }

    /// Opens every named database in one transaction: `mdb_dbi_open` "must not be called from multiple concurrent
    /// transactions in the same process". A write transaction creates the missing ones.
    private static func openDatabasesInOneTransaction(_ env: OpaquePointer, names: [String], readOnly: Bool) throws(LMDBError) -> [UInt32] {
        var txnPointer: OpaquePointer?
        var rc = lmdb_txn_begin(env, readOnly: readOnly, &txnPointer)
        if rc == MDB_MAP_RESIZED {
            // Another process grew the map between our open and now; nothing else uses `env` yet.
            try LMDBError.check(lmdb_env_set_mapsize(env, 0))
            rc = lmdb_txn_begin(env, readOnly: readOnly, &txnPointer)
        }
        try LMDBError.check(rc)
        guard let txn = txnPointer else { throw .invalidArgument }
        var dbis: [UInt32] = []
        do throws(LMDBError) {
            for name in names {
                var dbi: UInt32 = 0
                // In read-only mode a missing database is MDB_NOTFOUND, thrown as `.notFound`.
                try LMDBError.check(lmdb_dbi_open(txn, name, create: !readOnly, &dbi))
                dbis.append(dbi)
            }
        } catch {
            lmdb_txn_abort(txn)
            throw error
        }
        // A writable open commits (creating databases on a new store): it must build on the newest commit too.
        if !readOnly, !buildsOnNewestCommit(txn, newest: lmdb_env_info(env)) {
            lmdb_txn_abort(txn)
            throw .staleLockTable
        }
        // lmdb.h, mdb_dbi_open: "After a successful commit the handle will reside in the shared environment"
        // (for a read-only transaction too; an abort would close the handles).
        try LMDBError.check(lmdb_txn_commit(txn))
        return dbis
    }

    /// The length LMDB 0.9 gives `lock.mdb` on 64-bit systems: the lock-table header (three 64-byte cache lines, one of
    /// them the first reader slot) and one 64-byte slot per further reader. Exactly that, not rounded: LMDB derives
    /// the number of reader slots from a longer file.
    static func lockFileLength(maxReaders: Int) -> Int {
        (maxReaders + 2) * 64
    }

    /// How many pages `data.mdb` may lack at its end and still be a healthy store: LMDB 0.9 does not write pages
    /// that a transaction allocated and freed again ("loose" pages), so a commit can leave the file short of
    /// `(last_pgno + 1) * pagesize` by the few highest pages, which are free and never read. Writers here pad the
    /// file after such a commit, but one killed in between leaves it short. A file short by more than this is
    /// truncated.
    static let tolerableShortfallPages = 8

    static func isTolerablyShort(fileSize: Int, lastPage: Int, pageSize: Int) -> Bool {
        let needed = (lastPage + 1) * pageSize
        return fileSize >= needed
            || (fileSize % pageSize == 0 && needed - fileSize <= tolerableShortfallPages * pageSize && fileSize >= 2 * pageSize)
    }

    private static func validate(_ options: EnvironmentOptions) throws(LMDBError) {
        guard (0...Int(UInt32.max)).contains(options.maxDatabases),
              (1...Int(UInt32.max)).contains(options.maxReaders),
              options.initialMapSize > 0,
              options.maximumMapSize > 0
        else { throw .invalidArgument }
    }

    /// Non-empty names without NUL bytes, de-duplicated in order.
    private static func validatedNames(_ names: [String]) throws(LMDBError) -> [String] {
        var seen: Set<String> = []
        var result: [String] = []
        for name in names {
            guard !name.isEmpty, !name.utf8.contains(0) else { throw .invalidArgument }
            if seen.insert(name).inserted { result.append(name) }
        }
        return result
    }
}
