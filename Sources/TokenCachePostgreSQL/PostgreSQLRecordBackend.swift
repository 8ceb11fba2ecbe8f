import Metrics
import NIOCore
import PostgresNIO
import Synchronization
package import TokenCacheStorage

/// A store's records in a PostgreSQL database, shared by every host that opens the same schema with the same key.
///
/// The seam's synchronous transactions run as SQL transactions, one statement per read or write, blocking the caller's
/// thread (as LMDB blocks it on a page fault); the two calls an async caller makes instead run without blocking a
/// thread, each in one round trip: a ``ReadPlan``'s fetch is one statement, and a ``WritePlan``'s apply is one call
/// of the schema's `apply_plan` function, which checks what the plan read and writes its changes in one serialisable
/// transaction.
///
/// **Commit ids.** A server's commits are not numbered in commit order (a sequence number taken by a transaction that
/// commits late would be skipped by anyone who polled past it), and asking the server costs a round trip. So
/// ``lastCommitID`` is this host's epoch (``PostgreSQLChangeListener``): it stays put while the change listener is
/// connected and no host committed a change, and moves otherwise, so that what a caller caches against it (the
/// client's answers) is dropped whenever the store may have changed. A fetch's records carry a finer stamp, by bucket
/// (``BucketStamp``, ``isCurrent(_:)``), which holds across changes of other accounts.
package final class PostgreSQLRecordBackend: RecordBackend, RangeFetching, WritePlanApplying, RevisionFloorKeeping, BucketVersioning {
    package let address: PostgreSQLAddress
    let readers: PostgreSQLConnections
    let writers: PostgreSQLConnections
    let readOnly: Bool
    /// Numbers snapshots and commit ids (see the type's comment).
    let changes: PostgreSQLChangeListener
    /// The store's tables, as statements name them.
    let names: PostgreSQLSchema.Names
    /// A read plan's one statement (``PostgreSQLPlanQueries/fetchStatement(names:)``), prepared on each reader.
    let fetchStatement: String
    /// How long a write transaction that keeps losing to concurrent ones runs again before it gives up with
    /// `.conflict`: as long as a local store's writer waits for the writer lock (30 s by default), so that a write
    /// contended on a server is given up no sooner than one contended on a directory.
    static let conflictBudget: Duration = .seconds(30)

    init(address: PostgreSQLAddress, readers: PostgreSQLConnections, writers: PostgreSQLConnections, readOnly: Bool, hostID: String) {
        self.address = address
        self.readers = readers
        self.writers = writers
        self.readOnly = readOnly
        changes = PostgreSQLChangeListener(schema: address.schema, hostID: hostID, connections: readers)
        names = PostgreSQLSchema.Names(schema: address.schema)
        fetchStatement = PostgreSQLPlanQueries.fetchStatement(names: names)
    }

    deinit {
        changes.stop()
        readers.closeAll()
        writers.closeAll()
    }

    package var location: String { address.location }
    /// A row per record whatever its key: the shorter key saves the server nothing.
    package var lonePlacement: LonePlacement { .underOwnKey }

    package var lastCommitID: Int { changes.commitID() }

    /// The backends this thread is inside a write transaction of: a nested write is refused, as LMDB refuses it,
    /// rather than left to wait for locks its own outer transaction holds.
    @TaskLocal static var writing: Set<ObjectIdentifier> = []

    package func read<R>(_ body: (any RecordReading) throws -> R) throws -> R {
        // The snapshot is taken by a transaction's first statement: take it now, so that the read shows the store as
        // it was when `read` was called, whatever commits while `body` runs.
        try transaction(on: readers, begin: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY", takingSnapshot: true, body).result
    }

    package func write<R>(freeingSpace: Bool, _ body: (any RecordWriting) throws -> R) throws -> R {
        guard !readOnly else { throw StorageError(.readOnly, "the store at \(location) is open read-only") }
        guard !Self.writing.contains(ObjectIdentifier(self)) else {
            throw StorageError(.unsupportedEnvironment, "a write transaction was started inside another one on the same thread")
        }
        var attempt = 0
        let started = ContinuousClock.now
        while true {
            attempt += 1
            do {
                let (result, touched) = try Self.$writing.withValue(Self.writing.union([ObjectIdentifier(self)])) {
                    try transaction(on: writers, begin: "BEGIN ISOLATION LEVEL SERIALIZABLE", takingSnapshot: false, body)
                }
                changes.ownCommit(touching: touched)
                return result
            } catch let conflict as PostgreSQLFailure.RetryableConflict {
                writers.observability.transactionConflicts.increment()
                guard ContinuousClock.now - started < Self.conflictBudget else {
                    throw StorageError(
                        .conflict, "\(conflict.message); gave up after \(attempt) attempts in \(Self.conflictBudget). Nothing was written; retry"
                    )
                }
                Self.backOff(attempt)
            }
        }
    }

    /// Waits a random while that doubles with each lost attempt (0.5 ms to about 64 ms), so that writers that keep
    /// colliding spread out.
    static func backOff(_ attempt: Int) {
        let ceiling = 500 << min(attempt, 7)
        usleep(UInt32.random(in: UInt32(ceiling / 2)...UInt32(ceiling)))
    }

    /// `body` in one transaction on a connection of `pool`: committed when it returns, rolled back when it throws
    /// (the connection kept when the rollback succeeds, closed otherwise); with the buckets its writes touched.
    private func transaction<R>(
        on pool: PostgreSQLConnections, begin: String, takingSnapshot: Bool, _ body: (any RecordWriting) throws -> R
    ) throws -> (result: R, touched: Set<[UInt8]>) {
        let outcome: Result<(R, Set<[UInt8]>), any Error> = try pool.withConnection { connection in
            let transaction = PostgreSQLTransaction(connections: pool, connection: connection, names: names, snapshotID: changes.snapshotID())
            _ = try transaction.run(begin, PostgresBindings(), doing: "beginning a transaction")
            if takingSnapshot { _ = try transaction.run("SELECT 1", PostgresBindings(), doing: "beginning a transaction") }
            let result: R
            do {
                result = try body(transaction)
                if let conflict = transaction.conflict { throw conflict }
                if let failedFill = transaction.failedFill { throw failedFill }
            } catch {
                if let conflict = transaction.conflict { throw conflict }  // closes the connection, which ends the transaction
                if error is StorageError { throw error }
                _ = try transaction.run("ROLLBACK", PostgresBindings(), doing: "rolling back a transaction")
                return .failure(error)
            }
            _ = try transaction.run("COMMIT", PostgresBindings(), doing: "committing a transaction")
            return .success((result, transaction.touched))
        }
        return try outcome.get()
    }

    /// Sets the row-version sequence to `revision` if it is below. The records table is locked against writers
    /// meanwhile (every `nextval` of the sequence runs in a statement that writes it), so that no number drawn between
    /// the comparison and the `setval` is handed out again.
    package func raiseRevisionFloor(to revision: UInt64) throws {
        try write(freeingSpace: false) { transaction in
            let transaction = transaction as! PostgreSQLTransaction
            _ = try transaction.run("LOCK TABLE \(transaction.table) IN EXCLUSIVE MODE", PostgresBindings(), doing: "locking the records against writers")
            var binds = PostgresBindings()
            binds.append(Int64(clamping: revision))
            _ = try transaction.run(
                "SELECT setval('\(transaction.versions)', $1) FROM \(transaction.versions) WHERE last_value < $1", binds, doing: "raising the revision floor"
            )
        }
    }

    // MARK: Async path

    package func fetch(_ plan: ReadPlan) async throws -> FetchedRecords {
        let (values, snapshot, pending) = beginFetch(plan)
        let rows = try await readers.withConnection { connection in
            try await self.readers.runPrepared(self.fetchStatement, values, on: connection, doing: "fetching a read plan")
        }
        return try endFetch(plan, rows, snapshot, pending)
    }

    package func fetchBlocking(_ plan: ReadPlan) throws -> FetchedRecords {
        let (values, snapshot, pending) = beginFetch(plan)
        let rows = try readers.withConnection { connection in
            try readers.runPrepared(fetchStatement, values, on: connection, doing: "fetching a read plan")
        }
        return try endFetch(plan, rows, snapshot, pending)
    }

    /// What a fetch records before its statement: its values (with the buckets its ranges lie in), the commit id, and
    /// what its stamp starts from.
    private func beginFetch(_ plan: ReadPlan) -> ([PostgresData], Int, PostgreSQLChangeListener.PendingStamp?) {
        let buckets = PostgreSQLBuckets.dependencies(of: plan)
        let snapshot = changes.snapshotID()
        let pending = buckets.map { changes.beginStamp($0) }
        return (PostgreSQLPlanQueries.fetchValues(plan, buckets: buckets ?? []), snapshot, pending)
    }

    private func endFetch(
        _ plan: ReadPlan, _ rows: [PostgresRow], _ snapshot: Int, _ pending: PostgreSQLChangeListener.PendingStamp?
    ) throws -> FetchedRecords {
        try PostgreSQLPlanQueries.records(of: plan, from: rows, snapshotID: snapshot) { versions in
            pending.map { changes.stamp($0, versions: versions) }
        }
    }

    package func isCurrent(_ stamp: BucketStamp) -> Bool { changes.isCurrent(stamp) }

    package func apply(_ plan: WritePlan) async throws -> WritePlanOutcome {
        guard !readOnly else { throw StorageError(.readOnly, "the store at \(location) is open read-only") }
        // A plan fetched through a synchronous read carries no row versions: check its bytes in a transaction instead.
        guard let query = PostgreSQLPlanQueries.apply(plan, schema: names.schema) else {
            return try applySynchronously(plan)
        }
        do {
            // In a transaction of its own, not autocommit: a serialisable transaction may fail at its commit, which in
            // autocommit comes after the statement's result (postgres-nio would hand back the result and drop the
            // error with the connection), so an explicit COMMIT is what says whether the write is durable.
            let applied = try await writers.withConnection { connection -> Bool in
                _ = try await self.writers.run("BEGIN", on: connection, doing: "beginning a write plan's transaction")
                let rows = try await self.writers.run(query, on: connection, doing: "applying a write plan")
                let applied = try rows.first?.decode(Bool.self) ?? false
                _ = try await self.writers.run(applied ? "COMMIT" : "ROLLBACK", on: connection, doing: "committing a write plan")
                return applied
            }
            guard applied else {
                writers.observability.planConflicts.increment()
                return .conflict
            }
            changes.ownCommit(touching: Set(plan.mutations.compactMap(PostgreSQLBuckets.bucket(of:))))
            return .applied(commitID: changes.snapshotID())
        } catch is PostgreSQLFailure.RetryableConflict {
            writers.observability.planConflicts.increment()
            return .conflict
        }
    }

    // MARK: Figures

    package func usage() -> StorageUsage {
        let used = (try? sizeAtRest()) ?? 0
        return StorageUsage(currentCapacity: used, maximumCapacity: Int.max, usedBytes: used, readersInUse: 0, maxReaders: 0)
    }

    /// The bytes the store's tables and indexes take on the server.
    func sizeAtRest() throws -> Int { try Self.sizeAtRest(of: names, on: readers) }

    /// The bytes the tables of `names` take, asked on a connection of `pool`.
    static func sizeAtRest(of names: PostgreSQLSchema.Names, on pool: PostgreSQLConnections) throws -> Int {
        var binds = PostgresBindings()
        binds.append(names.records)
        let rows = try pool.withConnection { connection in
            try pool.run(PostgresQuery(unsafeSQL: "SELECT pg_total_relation_size($1::regclass)", binds: binds), on: connection, doing: "measuring the store")
        }
        return Int(try rows.first!.decode(Int64.self))
    }

    package func statistics() throws -> StorageStatistics {
        let spaces = try read { reader in
            var spaces: [KeySpace: StorageStatistics.Space] = [:]
            for space in KeySpace.allCases { spaces[space] = StorageStatistics.Space(entries: try reader.count(in: space)) }
            return spaces
        }
        let size = try sizeAtRest()
        return StorageStatistics(
            spaces: spaces, pageSize: 8192,
            usage: StorageUsage(currentCapacity: size, maximumCapacity: Int.max, usedBytes: size, readersInUse: 0, maxReaders: 0), readers: [],
            files: [:]
        )
    }

    /// The server keeps its own pages; nothing below the records is visible from here.
    package func integrityProblem() throws -> String? { nil }
}
