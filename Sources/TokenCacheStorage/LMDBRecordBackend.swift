internal import TokenCacheLMDB

#if canImport(Glibc)
import Glibc
#endif

/// The records in an LMDB environment in a store directory: one named LMDB database per key space, shared by every
/// process that opens the directory (LMDB's locks), durable at each commit.
///
/// Everything LMDB-specific above the thin wrapper lives here and in ``LMDBStorageLocation`` (the store directory's
/// files, compaction, moving a store aside): the local-filesystem rule, the environment's options, the database
/// handles, the consistent copy, and the mapping of LMDB's errors to ``StorageError`` (named after the directory). Map
/// growth, fork and nested-write checks, the stale-lock-table guard and reader-slot recovery are the wrapper's
/// (`TokenCacheLMDB`), which this adapter runs every transaction through. The store directory's ownership and modes
/// are the store's to check, before it opens a backend.
package final class LMDBRecordBackend: RecordBackend {
    /// How to open a store directory's environment.
    package struct Options: Sendable {
        package var directory: String
        package var initialMapSize: Int
        package var maximumMapSize: Int
        package var readOnly: Bool
        /// LMDB on NFS, SMB or FUSE can corrupt the store; refused unless this is set.
        package var allowNetworkFilesystem: Bool
        /// Room beyond `maximumMapSize` that only writes freeing space may use (`EnvironmentOptions.reservedMapSize`).
        package var reservedMapSize: Int = EnvironmentOptions().reservedMapSize
        /// How long an open or a write waits for another process's lock (`EnvironmentOptions.lockTimeout`).
        package var lockTimeout: Duration = EnvironmentOptions().lockTimeout

        package init(directory: String, initialMapSize: Int, maximumMapSize: Int, readOnly: Bool, allowNetworkFilesystem: Bool) {
            self.directory = directory
            self.initialMapSize = initialMapSize
            self.maximumMapSize = maximumMapSize
            self.readOnly = readOnly
            self.allowNetworkFilesystem = allowNetworkFilesystem
        }
    }

    let environment: Environment
    /// Identifies the LMDB environment: stores opened on one directory in one process share it.
    package var environmentIdentity: ObjectIdentifier { ObjectIdentifier(environment) }
    /// The key spaces' handles, at their ``KeySpace/rawValue``. In memory of the backend's own, not an array: reading
    /// an array held by a shared object retains and releases its buffer, a reference-count write that every thread's
    /// transactions would contend on.
    // SAFETY: initialised in init, immutable afterwards, freed in deinit.
    nonisolated(unsafe) fileprivate let databases: UnsafeMutableBufferPointer<Database>
    let maximumMapSize: Int

    package var location: String { environment.directory }

    /// A bucket's lone token under its prefix: the lookup's range read then needs one B-tree step, not two.
    package var lonePlacement: LonePlacement { .underPrefix }

    private init(environment: Environment, databases: [Database], maximumMapSize: Int) {
        self.environment = environment
        self.databases = .allocate(capacity: databases.count)
        _ = self.databases.initialize(from: databases)
        self.maximumMapSize = maximumMapSize
    }

    deinit {
        databases.deinitialize()
        databases.deallocate()
    }

    /// Opens (creating it when missing and not read-only) the environment in `options.directory`, with every
    /// ``KeySpace`` as a named database.
    /// - Throws: ``StorageError``: `.unsupportedEnvironment` (a network filesystem, an unsafe liblmdb),
    ///   `.corruptStore` (a key space is missing), and the mapped LMDB errors.
    package static func open(_ options: Options) throws(StorageError) -> LMDBRecordBackend {
        let directory = options.directory
        try LMDBStorageLocation(options).checkLocalFilesystem()
        var environmentOptions = EnvironmentOptions()
        environmentOptions.initialMapSize = options.initialMapSize
        environmentOptions.maximumMapSize = max(options.maximumMapSize, options.initialMapSize)
        environmentOptions.reservedMapSize = max(options.reservedMapSize, 0)
        environmentOptions.readOnly = options.readOnly
        environmentOptions.lockTimeout = options.lockTimeout
        let environment: Environment
        do {
            environment = try Environment.open(directory: directory, databases: KeySpace.allCases.map(\.name), options: environmentOptions)
        } catch .notFound {
            throw StorageError(.corruptStore, "the store at \(directory) lacks its databases (was it created by token-cache?)")
        } catch {
            throw StorageError(error, directory: directory)
        }
        var databases: [Database] = []
        for space in KeySpace.allCases {
            guard let database = environment.database(space.name) else {
                throw StorageError(.corruptStore, "the store at \(directory) lacks its '\(space.name)' database")
            }
            databases.append(database)
        }
        return LMDBRecordBackend(environment: environment, databases: databases, maximumMapSize: environmentOptions.maximumMapSize)
    }

    package func read<R>(_ body: (any RecordReading) throws -> R) throws -> R {
        do {
            return try environment.read { transaction in try body(LMDBTransaction(transaction: transaction, backend: self)) }
        } catch let error as LMDBError { throw StorageError(error, directory: location) }
    }

    package func write<R>(freeingSpace: Bool, _ body: (any RecordWriting) throws -> R) throws -> R {
        do {
            return try environment.write(freeingSpace ? .freeingSpace : .general) { transaction in try body(LMDBTransaction(transaction: transaction, backend: self)) }
        } catch let error as LMDBError { throw StorageError(error, directory: location) }
    }

    package var lastCommitID: Int { environment.lastTransactionID }

    package func usage() -> StorageUsage {
        let info = environment.info
        return StorageUsage(
            currentCapacity: info.mapSize, maximumCapacity: maximumMapSize, usedBytes: (info.lastPageNumber + 1) * info.pageSize,
            readersInUse: info.readersInUse, maxReaders: info.maxReaders
        )
    }

    package func statistics() throws -> StorageStatistics {
        let spaces: [KeySpace: StorageStatistics.Space]
        do {
            spaces = try environment.read { transaction in
                var spaces: [KeySpace: StorageStatistics.Space] = [:]
                for space in KeySpace.allCases {
                    let figures = try transaction.statistics(of: databases[space.rawValue])
                    spaces[space] = StorageStatistics.Space(
                        entries: figures.entries, depth: figures.depth, branchPages: figures.branchPages, leafPages: figures.leafPages,
                        overflowPages: figures.overflowPages
                    )
                }
                return spaces
            }
        } catch let error as LMDBError {
            throw StorageError(error, directory: location)
        }
        return StorageStatistics(
            spaces: spaces, pageSize: environment.info.pageSize, usage: usage(),
            readers: environment.readerSlots().map { StorageStatistics.Reader(pid: $0.pid, transactionID: $0.transactionID, isStale: $0.isStale) },
            files: environment.fileSizes()
        )
    }

    /// LMDB's two meta pages must hold transaction ids that its alternation leaves (FORMAT.md §9); otherwise one of
    /// them is damaged, and if it was the newer, the last commit was silently rolled back.
    package func integrityProblem() throws -> String? {
        let metaPages: MetaPages
        do { metaPages = try environment.metaPages() } catch { throw StorageError(error, directory: location) }
        guard !metaPages.areConsistent else { return nil }
        return "LMDB's meta pages hold transaction ids \(metaPages.page0) and \(metaPages.page1), which no sequence of commits "
            + "leaves: one is damaged, and the last committed transaction may have been rolled back. Copy the store "
            + "aside before writing to it (a write overwrites the damaged page)"
    }
}

extension LMDBRecordBackend: SnapshotCopyingBackend {
    /// Every key space copied in key order into a new data file in the destination directory (see
    /// `Environment.copy(intoDirectory:databases:progress:)`): with it, the directory is a store directory whose
    /// environment LMDB creates its lock file for on first open.
    package func copy(to destination: any StorageLocation, progress: (@Sendable (Int) -> Void)?) throws -> Int {
        guard let destination = destination as? LMDBStorageLocation else {
            throw StorageError(
                .invalidArgument, "a copy of the LMDB store at \(location) goes into a store directory, not the \(destination.kind) store at \(destination.location)"
            )
        }
        let directory = destination.options.directory
        do {
            return try environment.copy(intoDirectory: directory, databases: KeySpace.allCases.map(\.name), progress: progress)
        } catch where error.code == EEXIST {
            throw StorageError(
                .invalidArgument,
                "\(directory) already holds a data file or a partial copy (\(Environment.partialCopyName)); nothing was written"
            )
        } catch { throw StorageError(error, directory: location) }
    }
}

/// An LMDB transaction seen through the seam: key spaces by name, LMDB's errors as ``StorageError`` (so that a
/// failure reaches the store's code in its own terms even where that code catches it inside the transaction).
/// Read-write when the transaction is.
private struct LMDBTransaction<Transaction: ReadTransaction>: RecordReading {
    let transaction: Transaction
    /// Unowned: a view exists only inside `backend.read`/`write`, which keep the backend alive. A strong reference
    /// would be retained and released by every copy of the view (several per lookup), and since every thread's
    /// views share one backend, those reference-count writes would contend between cores.
    unowned(unsafe) let backend: LMDBRecordBackend  // with the transaction, two words: the existential holds it without allocating

    @inline(__always)
    func database(_ space: KeySpace) -> Database { backend.databases[space.rawValue] }

    @inline(__always)
    func mappingErrors<R>(_ body: () throws -> R) throws -> R {
        do { return try body() } catch let error as LMDBError { throw StorageError(error, directory: backend.location) }
    }

    func withValue<R>(in space: KeySpace, forKey key: [UInt8], _ body: (RawSpan) throws -> R) throws -> R? {
        try mappingErrors { try transaction.withValue(in: database(space), forKey: key) { value in try body(RawSpan(_unsafeBytes: value)) } }
    }

    func forEach(
        in space: KeySpace, prefix: [UInt8], _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws {
        try mappingErrors {
            try transaction.forEach(in: database(space), prefix: prefix) { key, value in
                try body(RawSpan(_unsafeBytes: key), RawSpan(_unsafeBytes: value))
            }
        }
    }

    func forEach(
        in space: KeySpace, from start: [UInt8], _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws {
        try mappingErrors {
            try transaction.forEach(in: database(space), from: start) { key, value in
                try body(RawSpan(_unsafeBytes: key), RawSpan(_unsafeBytes: value))
            }
        }
    }

    func count(in space: KeySpace) throws -> Int { try mappingErrors { try transaction.count(in: database(space)) } }

    var snapshotID: Int { transaction.snapshotID }

    func prefetch(_ view: RawSpan) { view.withUnsafeBytes { ReadTransaction.prefetch($0) } }

    func releaseResidentPages(around view: RawSpan) {
        view.withUnsafeBytes { view in
            if let address = view.baseAddress { transaction.releaseResidentPages(mappedAt: address) }
        }
    }
}

extension LMDBTransaction: RecordWriting where Transaction == WriteTransaction {
    func put(in space: KeySpace, key: [UInt8], value: UnsafeRawBufferPointer) throws {
        try mappingErrors { try transaction.put(in: database(space), key: key, value: value) }
    }

    func put(in space: KeySpace, key: [UInt8], reservingCount count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        try mappingErrors { try transaction.put(in: database(space), key: key, reservingCount: count, fill: fill) }
    }

    func delete(in space: KeySpace, key: [UInt8]) throws -> Bool {
        try mappingErrors { try transaction.delete(in: database(space), key: key) }
    }
}

extension StorageError {
    /// The storage error for an LMDB failure on the store at `directory`.
    init(_ lmdb: LMDBError, directory: String) {
        self = Self.map(lmdb, directory: directory)
    }

    private static func map(_ lmdb: LMDBError, directory: String) -> StorageError {
        switch lmdb {
        case .mapFull, .noSpace, .txnFull:
            return StorageError(
                .storageFull,
                "the store at \(directory) is full (\(lmdb)); raise the maximum map size or free disk space. Nothing was written"
            )
        case .staleLockTable:
            return StorageError(
                .staleLockTable,
                "nothing was written to \(directory): LMDB's lock table lags the newest commit (a process was killed "
                    + "while opening the store, or a tool opened it without token-cache's open lock), and writing now "
                    + "would overwrite that commit. Close every process using the store, then retry"
            )
        case .readersFull:
            return StorageError(.readersExhausted, "too many concurrent readers of \(directory) (\(lmdb))")
        case .lockTimeout:
            return StorageError(.lockTimeout, "the store at \(directory) is busy: \(lmdb). Nothing was changed; retry once it is done")
        // MDB_BAD_TXN: the wrapper never reuses a failed transaction, so it means LMDB failed an internal read
        // earlier in this one without reporting it (refreshing a database's record whose root page number is
        // damaged does that) and refuses to go on: damage, not an I/O error.
        case .invalid, .corrupted, .truncatedDataFile, .pageNotFound, .panic, .badTxn:
            return StorageError(
                .corruptStore,
                "the LMDB environment at \(directory) is damaged or not an LMDB file (\(lmdb)); "
                    + "move it aside and restore from a backup or re-create it with `cachetool init`"
            )
        case .versionMismatch:
            return StorageError(.unsupportedFormatVersion, "the LMDB file at \(directory) was written by an incompatible LMDB (\(lmdb))")
        case .accessDenied, .readOnlyFilesystem:
            return StorageError(
                .insecurePermissions,
                "permission denied for \(directory) (\(lmdb)); LMDB readers need write access to lock.mdb"
            )
        case .usedAfterFork, .nestedWrite, .unsupportedLibraryVersion:
            return StorageError(.unsupportedEnvironment, "\(lmdb)")
        default:
            return StorageError(.ioFailure, "LMDB failed on \(directory): \(lmdb)")
        }
    }
}
