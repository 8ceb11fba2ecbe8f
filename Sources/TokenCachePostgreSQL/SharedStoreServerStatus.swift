import Foundation
public import TokenCache
import NIOCore
import PostgresNIO
import TokenCacheStorage

/// What a shared store's server says about the store now, for an operator (`cachetool status`): the server, the
/// tables' version, rows and size, who is connected and listening, the notification queue and the server's clock.
///
/// Nothing here is secret or identifies a user: counts of rows per key space (the space is the record's kind,
/// FORMAT.md §2.2, which a copy of the tables shows anyway; the keys are blind and are never read), sizes, counts of
/// sessions, and the location without its password.
///
/// **How listeners are counted.** A session cannot see which channels another session listens on
/// (`pg_listening_channels()` is the caller's own), and `pg_stat_activity` shows other roles' queries to privileged
/// roles only. So every host's change listener connects under an `application_name` of its own,
/// ``PostgreSQLSchema/listenerApplicationName(_:)`` (`token-cache listener <schema>`), which `pg_stat_activity` shows to
/// every role: the listeners are the sessions of the store's database with that name. Other sessions of the store's
/// hosts carry the URL's `application_name` (`token-cache` by default) and are counted as sessions.
public struct SharedStoreServerStatus: Sendable, Equatable {
    /// The store's location, without its password or password file.
    public var location: String
    /// The server's version (`server_version`).
    public var serverVersion: String
    /// The version of the store's tables, nil when the schema holds no store.
    public var schemaVersion: Int?
    /// The version of the tables this build reads and writes.
    public var knownSchemaVersion: Int
    /// Rows per key space, by FORMAT.md §3's name (`meta`, `accounts`, `access_tokens`, …); empty without tables.
    public var rows: [String: Int]
    /// The `meta` rows that are refresh leases (held, lapsed or refusal records): part of `rows["meta"]`.
    public var leaseRows: Int
    /// Bytes of the `records` table's heap, its indexes, and its TOAST table (with the TOAST index).
    public var tableBytes: Int
    public var indexBytes: Int
    public var toastBytes: Int
    /// Sessions of the store's database (other than the one asking) under the URL's `application_name`.
    public var sessions: Int
    /// Sessions of the store's database under the store's listener name: the hosts whose change listener is connected.
    public var listeners: Int
    /// `pg_notification_queue_usage()`: the share of the server's notification queue in use, 0 to 1. Near 1, a
    /// listener that does not read holds the queue up and every writer's commit fails.
    public var notificationQueueUsage: Double
    /// The server's clock (`clock_timestamp()`), Unix milliseconds.
    public var serverMilliseconds: Int64
    /// The server's clock minus this host's, in milliseconds, taken at the midpoint of the round trip that read it.
    public var clockSkewMilliseconds: Int64
    /// How long that round trip took, in milliseconds: the skew is known to within half of it.
    public var roundTripMilliseconds: Int64

    /// Whether this build reads and writes the store's tables.
    public var schemaIsKnown: Bool { schemaVersion == knownSchemaVersion }
}

extension Configuration {
    /// The status of this configuration's shared store, read from its server: nil when the configuration names a
    /// directory. Works whatever the schema holds (no store, or tables of another version), so that it says why a
    /// store does not open; it needs no key. Every statement is bounded by the store's timeout.
    /// - Throws: ``TokenCacheError`` `.storeUnavailable` when the server cannot be reached or does not answer in time.
    public func sharedStoreServerStatus() throws(TokenCacheError) -> SharedStoreServerStatus? {
        guard let location = storageLocation as? PostgreSQLStorageLocation else { return nil }
        do { return try location.serverStatus() } catch { throw TokenCacheError.wrap(error, directory: location.location) }
    }
}

extension PostgreSQLStorageLocation {
    /// ``SharedStoreServerStatus``, one bounded statement after another on one reading connection, which is closed
    /// afterwards (the store is not opened: no pools, no change listener).
    func serverStatus() throws -> SharedStoreServerStatus {
        try askingOnce { readers in try serverStatus(on: readers) }
    }

    private func serverStatus(on readers: PostgreSQLConnections) throws -> SharedStoreServerStatus {
        let tables = PostgreSQLSchema.Names(schema: address.schema)
        let version = try PostgreSQLRecordBackend.schemaVersion(of: tables, on: readers)
        return try readers.withConnection { connection in
            func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings(), _ what: String) throws -> PostgresQueryResult {
                try readers.run(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection, doing: what)
            }
            var status = SharedStoreServerStatus(
                location: address.location, serverVersion: "", schemaVersion: version.map(Int.init),
                knownSchemaVersion: Int(PostgreSQLSchema.version), rows: [:], leaseRows: 0, tableBytes: 0, indexBytes: 0, toastBytes: 0,
                sessions: 0, listeners: 0, notificationQueueUsage: 0, serverMilliseconds: 0, clockSkewMilliseconds: 0, roundTripMilliseconds: 0
            )
            status.serverVersion = try query("SELECT current_setting('server_version')", PostgresBindings(), "reading the server's version")
                .first!.decode(String.self)
            if version != nil {
                let names = Dictionary(uniqueKeysWithValues: KeySpace.allCases.map { ($0.rawValue, $0.name) })
                for space in KeySpace.allCases { status.rows[space.name] = 0 }
                // Refresh leases are the meta keys that start with the lease prefix (FORMAT.md §5.7).
                var leaseRange = PostgresBindings()
                leaseRange.append(ByteBuffer(bytes: RecordStore.refreshLeasePrefix))
                leaseRange.append(ByteBuffer(bytes: PostgreSQLRange.end(ofPrefix: RecordStore.refreshLeasePrefix)!))
                let counted = try query(
                    "SELECT space, count(*), count(*) FILTER (WHERE space = 0 AND key >= $1 AND key < $2) "
                        + "FROM \(tables.records) GROUP BY space", leaseRange, "counting the store's rows"
                )
                for row in counted {
                    let (space, count, leases) = try row.decode((Int16, Int64, Int64).self)
                    if let name = names[Int(space)] { status.rows[name] = Int(count) } else { status.rows["space \(space)"] = Int(count) }
                    status.leaseRows += Int(leases)
                }
                var table = PostgresBindings()
                table.append(tables.records)
                let sizes = try query(
                    "SELECT pg_relation_size(c.oid), pg_indexes_size(c.oid), coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) "
                        + "FROM pg_class c WHERE c.oid = to_regclass($1)", table, "measuring the store's table"
                )
                if let row = sizes.first {
                    let (heap, indexes, toast) = try row.decode((Int64, Int64, Int64).self)
                    (status.tableBytes, status.indexBytes, status.toastBytes) = (Int(heap), Int(indexes), Int(toast))
                }
            }
            var names = PostgresBindings()
            names.append(address.applicationName)
            names.append(PostgreSQLSchema.listenerApplicationName(address.schema))
            let sessions = try query(
                "SELECT count(*) FILTER (WHERE application_name = $1), count(*) FILTER (WHERE application_name = $2) FROM pg_stat_activity "
                    + "WHERE datname = current_database() AND pid <> pg_backend_pid()", names, "counting the store's sessions"
            )
            let (plain, listening) = try sessions.first!.decode((Int64, Int64).self)
            (status.sessions, status.listeners) = (Int(plain), Int(listening))
            status.notificationQueueUsage = try query("SELECT pg_notification_queue_usage()", PostgresBindings(), "reading the notification queue's use")
                .first!.decode(Double.self)
            let before = Date()
            let server = try query(
                "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::int8", PostgresBindings(), "reading the server's clock"
            ).first!.decode(Int64.self)
            let after = Date()
            let midpoint = Int64(((before.timeIntervalSince1970 + after.timeIntervalSince1970) / 2 * 1000).rounded())
            status.serverMilliseconds = server
            status.clockSkewMilliseconds = server - midpoint
            status.roundTripMilliseconds = Int64((after.timeIntervalSince(before) * 1000).rounded())
            return status
        }
    }
}
