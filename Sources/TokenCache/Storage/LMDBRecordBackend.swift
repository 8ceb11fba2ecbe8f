internal import TokenCacheLMDB

/// The records in an LMDB environment in a store directory: one named LMDB database per key space, shared by every
/// process that opens the directory (LMDB's locks), durable at each commit.
///
/// Everything LMDB-specific above the thin wrapper lives here: the store directory's file checks, the environment's
/// options, the database handles, and the mapping of LMDB's errors to ``TokenCacheError`` (named after the directory).
/// Map growth, fork and nested-write checks, the stale-lock-table guard and reader-slot recovery are the wrapper's
/// (`TokenCacheLMDB`), which this adapter runs every transaction through.
final class LMDBRecordBackend: RecordBackend {
    let environment: Environment
    private let databases: [String: Database]
    let maximumMapSize: Int

    var location: String { environment.directory }

    private init(environment: Environment, databases: [String: Database], maximumMapSize: Int) {
        self.environment = environment
        self.databases = databases
        self.maximumMapSize = maximumMapSize
    }

    static func dataFilePath(_ directory: String) -> String { directory + "/data.mdb" }

    /// Opens the environment of the store directory `configuration.directory` with the key spaces `spaces`,
    /// creating the directory (0700) and the environment when `create` is set. Checks first that the directory and
    /// its files are the user's alone and that the filesystem is local (unless allowed otherwise).
    /// - Throws: ``TokenCacheError``: `.storeNotFound` (no data file and not `create`), `.readOnly` (create read-only),
    ///   `.insecurePermissions`, `.unsupportedEnvironment`, `.corruptStore` (a database is missing), and the mapped
    ///   LMDB errors.
    static func open(_ configuration: Configuration, spaces: [String], create: Bool) throws -> LMDBRecordBackend {
        let directory = configuration.directory
        let dataFile = dataFilePath(directory)
        if create {
            guard !configuration.readOnly else { throw TokenCacheError(.readOnly, "cannot create a store read-only") }
            try FileSystem.makeDirectory(directory)
        } else if !FileSystem.exists(dataFile) {
            throw TokenCacheError(.storeNotFound, "no token cache at \(directory) (create one with `cachetool init`)")
        }
        if !configuration.allowNetworkFilesystem { try FileSystem.checkLocalFilesystem(directory) }
        try FileSystem.checkPrivate(directory, what: "store directory", fix: "chmod 700 \(directory)")
        for file in [dataFile, directory + "/lock.mdb", directory + "/open.lock"] where FileSystem.exists(file) {
            try FileSystem.checkPrivate(file, what: "store file", fix: "chmod 600 \(file)")
        }

        var options = EnvironmentOptions()
        options.initialMapSize = configuration.initialMapSize
        options.maximumMapSize = max(configuration.maximumMapSize, configuration.initialMapSize)
        options.readOnly = configuration.readOnly
        let environment: Environment
        do {
            environment = try Environment.open(directory: directory, databases: spaces, options: options)
        } catch .notFound {
            throw TokenCacheError(.corruptStore, "the store at \(directory) lacks its databases (was it created by token-cache?)")
        } catch {
            throw TokenCacheError.wrap(error, directory: directory)
        }
        var databases: [String: Database] = [:]
        for name in spaces {
            guard let database = environment.database(name) else {
                throw TokenCacheError(.corruptStore, "the store at \(directory) lacks its '\(name)' database")
            }
            databases[name] = database
        }
        return LMDBRecordBackend(environment: environment, databases: databases, maximumMapSize: options.maximumMapSize)
    }

    func read<R>(_ body: (any RecordReading) throws -> R) throws -> R {
        do {
            return try environment.read { transaction in try body(LMDBTransaction(transaction: transaction, databases: databases)) }
        } catch { throw TokenCacheError.wrapKeepingCallerErrors(error, directory: location) }
    }

    func write<R>(_ body: (any RecordWriting) throws -> R) throws -> R {
        do {
            return try environment.write { transaction in try body(LMDBTransaction(transaction: transaction, databases: databases)) }
        } catch { throw TokenCacheError.wrapKeepingCallerErrors(error, directory: location) }
    }

    func usage() -> StorageUsage {
        let info = environment.info
        return StorageUsage(
            currentCapacity: info.mapSize, maximumCapacity: maximumMapSize, usedBytes: (info.lastPageNumber + 1) * info.pageSize,
            readersInUse: info.readersInUse, maxReaders: info.maxReaders
        )
    }

    /// LMDB's two meta pages must hold transaction ids that its alternation leaves (FORMAT.md §9); otherwise one of
    /// them is damaged, and if it was the newer, the last commit was silently rolled back.
    func integrityProblem() throws -> String? {
        let metaPages: MetaPages
        do { metaPages = try environment.metaPages() } catch { throw TokenCacheError.wrap(error, directory: location) }
        guard !metaPages.areConsistent else { return nil }
        return "LMDB's meta pages hold transaction ids \(metaPages.page0) and \(metaPages.page1), which no sequence of commits "
            + "leaves: one is damaged, and the last committed transaction may have been rolled back. Copy the store "
            + "aside before writing to it (a write overwrites the damaged page)"
    }

    static var libraryVersion: String { Environment.libraryVersion }
}

/// An LMDB transaction seen through the seam: key spaces by name. Read-write when the transaction is.
private struct LMDBTransaction<Transaction: ReadTransaction>: RecordReading {
    let transaction: Transaction
    let databases: [String: Database]

    func database(_ space: String) -> Database {
        guard let database = databases[space] else { preconditionFailure("no key space '\(space)' was opened") }
        return database
    }

    func withValue<R>(in space: String, forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        try transaction.withValue(in: database(space), forKey: key, body)
    }

    func forEach(
        in space: String, prefix: [UInt8], _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try transaction.forEach(in: database(space), prefix: prefix, body)
    }

    func forEach(
        in space: String, from start: [UInt8], _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try transaction.forEach(in: database(space), from: start, body)
    }

    func count(in space: String) throws -> Int { try transaction.count(in: database(space)) }

    var snapshotID: Int { transaction.snapshotID }

    func prefetch(_ view: UnsafeRawBufferPointer) { ReadTransaction.prefetch(view) }
}

extension LMDBTransaction: RecordWriting where Transaction == WriteTransaction {
    func put(in space: String, key: [UInt8], value: UnsafeRawBufferPointer) throws {
        try transaction.put(in: database(space), key: key, value: value)
    }

    func put(in space: String, key: [UInt8], reservingCount count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        try transaction.put(in: database(space), key: key, reservingCount: count, fill: fill)
    }

    func delete(in space: String, key: [UInt8]) throws -> Bool {
        try transaction.delete(in: database(space), key: key)
    }
}
