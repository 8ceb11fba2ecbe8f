package import Logging
package import Metrics
import NIOCore
import PostgresNIO
package import TokenCacheStorage
internal import TokenCacheSodium

/// A shared store in a PostgreSQL schema: what the library opens, creates and maintains there.
///
/// The schema's tables are made by a creation (`cachetool init --store postgresql://…`), under a transaction-scoped
/// advisory lock so that two hosts creating at once make one set; an open checks `schema_version` first and refuses a
/// version it does not know. It offers none of the file-level maintenance capabilities (compaction, quarantine,
/// snapshot copies): the server keeps its own files, and an operation that needs one is refused, naming it.
package struct PostgreSQLStorageLocation: StorageLocation {
    package private(set) var address: PostgreSQLAddress
    /// How long a connection, a statement or a transaction may take (``PostgreSQLConnections``).
    package let timeout: Duration
    /// Connections kept open per pool between transactions.
    package let keptConnections: Int
    let observability: SharedStoreObservability

    package init(
        address: PostgreSQLAddress, timeout: Duration, keptConnections: Int = 4, logger: Logger? = nil, metricsFactory: (any MetricsFactory)? = nil
    ) {
        self.address = address
        self.timeout = timeout
        self.keptConnections = keptConnections
        observability = SharedStoreObservability(logger: logger, factory: metricsFactory)
    }

    package var location: String { address.location }
    package var kind: String { "PostgreSQL" }
    package var directory: String? { nil }
    package var files: [StoreFile] { [] }

    /// Whether the schema holds the store's tables; false when the server cannot be asked either.
    package func holdsStore() -> Bool {
        (try? askingOnce { try PostgreSQLRecordBackend.schemaVersion(of: PostgreSQLSchema.Names(schema: address.schema), on: $0) }) != nil
    }

    package func sizeAtRest() -> Int? {
        try? askingOnce { try PostgreSQLRecordBackend.sizeAtRest(of: PostgreSQLSchema.Names(schema: address.schema), on: $0) }
    }

    /// `body` on a pool that keeps no connection: one connection, closed once `body` is done. A question about the
    /// store that does not open it (no writers' pool, no change listener).
    func askingOnce<R>(_ body: (PostgreSQLConnections) throws -> R) throws -> R {
        try body(
            try PostgreSQLConnections(
                address: address, password: try password(), role: .reading, timeout: timeout, keptIdle: 0, hostID: "", observability: observability
            )
        )
    }

    /// The password the URL or the password file gives, if any.
    func password() throws(StorageError) -> String? {
        if let given = address.password { return given }
        return try PostgreSQLPasswordFile.password(for: address)
    }

    /// The same server and options with another URL (a backup's destination given as a URL).
    package func relocated(to location: String) -> any StorageLocation {
        guard let address = try? PostgreSQLAddress(parsing: location) else { return UnusablePostgreSQLLocation(location: location) }
        var relocated = self
        relocated.address = address
        return relocated
    }

    /// Brings the store's tables to this build's version (``PostgreSQLRecordBackend/migrateSchema()``).
    /// - Returns: The version they had, and this build's.
    package func migrate() throws(StorageError) -> (from: Int32, to: Int32) {
        do {
            let backend = try self.backend(readOnly: false)
            return (try backend.migrateSchema(), PostgreSQLSchema.version)
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.ioFailure, "the store at \(location) cannot be migrated: \(error)")
        }
    }

    package func open(readOnly: Bool, create: Bool) throws(StorageError) -> any RecordBackend {
        do {
            let backend = try self.backend(readOnly: readOnly)
            let version = try backend.schemaVersion()
            switch version {
            case PostgreSQLSchema.version?: break
            case nil:
                guard create, !readOnly else {
                    throw StorageError(.storeNotFound, "no token cache at \(location) (create one with `cachetool init --store …`)")
                }
                try backend.createSchema()
            case let older? where PostgreSQLSchema.migrations(from: older, in: address.schema) != nil:
                throw StorageError(
                    .unsupportedFormatVersion,
                    "the store at \(location) has schema version \(older), and this version of token-cache uses version "
                        + "\(PostgreSQLSchema.version): migrate it with `cachetool migrate --store …` (hosts of the older version keep working)"
                )
            case let other?:
                throw StorageError(
                    .unsupportedFormatVersion,
                    "the store at \(location) has schema version \(other), and this version of token-cache knows version "
                        + "\(PostgreSQLSchema.version) only; use the token-cache that made it"
                )
            }
            return backend
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.ioFailure, "the store at \(location) cannot be opened: \(error)")
        }
    }

    func backend(readOnly: Bool) throws(StorageError) -> PostgreSQLRecordBackend {
        let secret = try password()
        // Who this host is, to the other hosts' change listeners: new for every open.
        let hostID = Random.hexIdentifier(bytes: 16)
        return PostgreSQLRecordBackend(
            address: address,
            readers: try PostgreSQLConnections(
                address: address, password: secret, role: .reading, timeout: timeout, keptIdle: keptConnections, hostID: hostID,
                observability: observability
            ),
            writers: try PostgreSQLConnections(
                address: address, password: secret, role: .writing, timeout: timeout, keptIdle: keptConnections, hostID: hostID,
                observability: observability
            ),
            readOnly: readOnly, hostID: hostID
        )
    }
}

extension PostgreSQLRecordBackend {
    /// The schema's version, nil when it holds no store's tables.
    func schemaVersion() throws -> Int32? { try Self.schemaVersion(of: names, on: readers) }

    /// The version of the tables `names` names, nil when there are none, asked on a connection of `pool`.
    static func schemaVersion(of names: PostgreSQLSchema.Names, on pool: PostgreSQLConnections) throws -> Int32? {
        try pool.withConnection { connection in
            var binds = PostgresBindings()
            binds.append(names.schemaVersion)
            let exists = try pool.run(PostgresQuery(unsafeSQL: "SELECT to_regclass($1) IS NOT NULL", binds: binds), on: connection, doing: "looking for the store")
            guard try exists.first!.decode(Bool.self) else { return nil }
            let rows = try pool.run(PostgresQuery(unsafeSQL: "SELECT version FROM \(names.schemaVersion)"), on: connection, doing: "reading the schema version")
            return try rows.first?.decode(Int32.self)
        }
    }

    /// Makes the store's tables in its schema, unless another host just did: one transaction, under the schema's
    /// advisory lock.
    func createSchema() throws {
        try underSchemaLock(doing: "creating the store's tables") { run in
            var name = PostgresBindings()
            name.append(names.schemaVersion)
            if try run("SELECT to_regclass($1) IS NULL", name).first!.decode(Bool.self) {
                for statement in PostgreSQLSchema.creation(in: address.schema) { _ = try run(statement, PostgresBindings()) }
            }
        }
    }

    /// Brings the store's tables to this build's version, unless another host just did: one transaction, under the
    /// schema's advisory lock, so that a migration is all or nothing and two at once make one.
    /// - Returns: The version the tables had (this build's when there was nothing to do).
    /// - Throws: `.storeNotFound` for a schema without tables; `.unsupportedFormatVersion` for a version no migration
    ///   leads from (a newer one).
    func migrateSchema() throws -> Int32 {
        try underSchemaLock(doing: "migrating the store's tables") { run in
            let rows = try run("SELECT version FROM \(names.schemaVersion) FOR UPDATE", PostgresBindings())
            guard let found = try rows.first?.decode(Int32.self) else {
                throw StorageError(.storeNotFound, "no token cache at \(location) (create one with `cachetool init --store …`)")
            }
            var version = found
            while version != PostgreSQLSchema.version {
                guard version < PostgreSQLSchema.version, let statements = PostgreSQLSchema.migrations(from: version, in: address.schema) else {
                    throw StorageError(
                        .unsupportedFormatVersion,
                        "the store at \(location) has schema version \(found), and this version of token-cache knows no migration from it "
                            + "(it uses version \(PostgreSQLSchema.version)); use the token-cache that made it"
                    )
                }
                for statement in statements { _ = try run(statement, PostgresBindings()) }
                version = try run("SELECT version FROM \(names.schemaVersion)", PostgresBindings()).first!.decode(Int32.self)
            }
            return found
        }
    }

    /// `body` in one transaction on a writer connection, under the schema's transaction-scoped advisory lock;
    /// committed when it returns, rolled back when it throws.
    private func underSchemaLock<R>(
        doing what: String, _ body: (_ run: (String, PostgresBindings) throws -> PostgresQueryResult) throws -> R
    ) throws -> R {
        try writers.withConnection { connection in
            func run(_ sql: String, _ binds: PostgresBindings) throws -> PostgresQueryResult {
                try writers.run(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection, doing: what)
            }
            // Read committed, not the writers' serialisable default: each statement after the lock must see what the
            // holder before this one committed (a serialisable snapshot, taken by the lock's statement, would not,
            // and the second of two migrations at once would fail on the row the first updated).
            _ = try run("BEGIN ISOLATION LEVEL READ COMMITTED", PostgresBindings())
            var lock = PostgresBindings()
            lock.append(PostgreSQLSchema.lockKey(address.schema))
            _ = try run("SELECT pg_advisory_xact_lock(hashtext($1))", lock)
            let result: R
            do { result = try body(run) } catch {
                _ = try? run("ROLLBACK", PostgresBindings())
                throw error
            }
            _ = try run("COMMIT", PostgresBindings())
            return result
        }
    }
}

/// Where a relocation to something that is not a PostgreSQL URL leads: every open says why.
struct UnusablePostgreSQLLocation: StorageLocation {
    let location: String
    var kind: String { "PostgreSQL" }
    var directory: String? { nil }
    var files: [StoreFile] { [] }
    func holdsStore() -> Bool { false }
    func sizeAtRest() -> Int? { nil }
    func relocated(to location: String) -> any StorageLocation { UnusablePostgreSQLLocation(location: location) }
    func open(readOnly: Bool, create: Bool) throws(StorageError) -> any RecordBackend {
        _ = try PostgreSQLAddress(parsing: location)
        throw StorageError(.invalidArgument, "\(location) is not a PostgreSQL URL")
    }
}
