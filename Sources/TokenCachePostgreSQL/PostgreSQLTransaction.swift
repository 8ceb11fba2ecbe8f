import NIOCore
import PostgresNIO
import TokenCacheStorage

/// One transaction of a shared store on its connection: the storage seam's reads and writes as SQL on the `records`
/// table, one statement each.
///
/// A read transaction is `REPEATABLE READ, READ ONLY` (one snapshot for all its statements, as an LMDB read
/// transaction); a write transaction is `SERIALIZABLE`, so that the server orders concurrent writers as LMDB's single
/// writer would, failing one of two that read what the other wrote (its driver runs it again). Range reads go page by
/// page in key order (keyset pagination), so that a walk over a whole key space holds one page in memory.
final class PostgreSQLTransaction: RecordWriting, ServerClockReading, RevisionFloorReading {
    let connections: PostgreSQLConnections
    let connection: PostgresConnection
    let table: String
    /// The sequence a write numbers its row's version from.
    let versions: String
    let snapshotID: Int
    /// A serialisation failure one of its statements met, kept even if the code above caught it: the server has
    /// aborted the transaction, so its driver runs it again whatever the body did with the error.
    private(set) var conflict: PostgreSQLFailure.RetryableConflict?
    /// A reserved value's fill that failed, kept even if the code above caught it: committing would store a value
    /// that was never sealed, so the transaction rolls back.
    private(set) var failedFill: (any Error)?
    /// ``revisionFloor()`` once read.
    private var floor: UInt64?
    /// The buckets its writes touched (``PostgreSQLBuckets``): what this host's cached answers lose on its commit.
    private(set) var touched: Set<[UInt8]> = []

    /// Rows a range read asks for at once.
    static let pageSize = 256

    init(connections: PostgreSQLConnections, connection: PostgresConnection, names: PostgreSQLSchema.Names, snapshotID: Int) {
        self.connections = connections
        self.connection = connection
        table = names.records
        versions = names.rowVersion
        self.snapshotID = snapshotID
    }

    func run(_ sql: String, _ binds: PostgresBindings, doing what: String) throws -> PostgresQueryResult {
        do { return try connections.run(PostgresQuery(unsafeSQL: sql, binds: binds), on: connection, doing: what) } catch let lost as PostgreSQLFailure.RetryableConflict {
            conflict = lost
            throw lost
        }
    }

    static func bindings(_ space: KeySpace, _ keys: [UInt8]...) -> PostgresBindings {
        var binds = PostgresBindings(capacity: 1 + keys.count)
        binds.append(Int16(space.rawValue))
        for key in keys { binds.append(ByteBuffer(bytes: key)) }
        return binds
    }

    func withValue<R>(in space: KeySpace, forKey key: [UInt8], _ body: (RawSpan) throws -> R) throws -> R? {
        try StorageKeyLimits.check(key)
        let rows = try run("SELECT value FROM \(table) WHERE space = $1 AND key = $2", Self.bindings(space, key), doing: "reading a record")
        guard let row = rows.first else { return nil }
        let value = try row.decode(ByteBuffer.self)
        return try value.withUnsafeReadableBytes { try body(RawSpan(_unsafeBytes: $0)) }
    }

    func forEach(in space: KeySpace, prefix: [UInt8], _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool) throws {
        try StorageKeyLimits.check(prefix, allowingEmpty: true)
        try walk(space, from: prefix, inclusive: true, below: PostgreSQLRange.end(ofPrefix: prefix), body)
    }

    func forEach(in space: KeySpace, from start: [UInt8], _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool) throws {
        try StorageKeyLimits.check(start, allowingEmpty: true)
        try walk(space, from: start, inclusive: true, below: nil, body)
    }

    /// Every record of `space` from `start` (and below `end`, if any), page by page, until `body` returns false.
    private func walk(
        _ space: KeySpace, from start: [UInt8], inclusive: Bool, below end: [UInt8]?, _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws {
        var after = start
        var first = inclusive
        while true {
            var sql = "SELECT key, value FROM \(table) WHERE space = $1 AND key \(first ? ">=" : ">") $2"
            var binds = Self.bindings(space, after)
            if let end {
                sql += " AND key < $3"
                binds.append(ByteBuffer(bytes: end))
            }
            sql += " ORDER BY key LIMIT \(Self.pageSize)"
            let rows = try run(sql, binds, doing: "reading a range of records")
            var count = 0
            for row in rows {
                let (key, value) = try row.decode((ByteBuffer, ByteBuffer).self)
                count += 1
                let goOn = try key.withUnsafeReadableBytes { keyBytes in
                    try value.withUnsafeReadableBytes { valueBytes in try body(RawSpan(_unsafeBytes: keyBytes), RawSpan(_unsafeBytes: valueBytes)) }
                }
                if !goOn { return }
                after = Array(key.readableBytesView)
            }
            if count < Self.pageSize { return }
            first = false
        }
    }

    /// The row-version sequence's last value, read once per transaction: every write of a row draws from it, so it
    /// has passed every revision written before this transaction looked (``RevisionFloorReading``).
    func revisionFloor() throws -> UInt64 {
        if let floor { return floor }
        let rows = try run("SELECT last_value FROM \(versions)", PostgresBindings(), doing: "reading the revision floor")
        let floor = UInt64(clamping: try rows.first!.decode(Int64.self))
        self.floor = floor
        return floor
    }

    /// `clock_timestamp()`, the server's time as the statement runs (not the transaction's start, `now()`).
    func serverMilliseconds() throws -> Int64 {
        let rows = try run("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::int8", PostgresBindings(), doing: "reading the server's clock")
        return try rows.first!.decode(Int64.self)
    }

    func count(in space: KeySpace) throws -> Int {
        let rows = try run("SELECT count(*) FROM \(table) WHERE space = $1", Self.bindings(space), doing: "counting records")
        return Int(try rows.first!.decode(Int64.self))
    }

    func put(in space: KeySpace, key: [UInt8], value: UnsafeRawBufferPointer) throws {
        try StorageKeyLimits.check(key)
        var binds = Self.bindings(space, key)
        binds.append(ByteBuffer(bytes: value))
        if let bucket = PostgreSQLBuckets.bucket(of: space, key: key) { touched.insert(bucket) }
        _ = try run(
            "INSERT INTO \(table) (space, key, value) VALUES ($1, $2, $3) ON CONFLICT (space, key) DO UPDATE SET value = excluded.value, "
                + "version = nextval('\(versions)')",
            binds, doing: "writing a record"
        )
    }

    func put(in space: KeySpace, key: [UInt8], reservingCount count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        var value = [UInt8](repeating: 0, count: count)
        do { try value.withUnsafeMutableBytes { try fill($0) } } catch {
            failedFill = error
            throw error
        }
        try value.withUnsafeBytes { try put(in: space, key: key, value: $0) }
    }

    func delete(in space: KeySpace, key: [UInt8]) throws -> Bool {
        try StorageKeyLimits.check(key)
        if let bucket = PostgreSQLBuckets.bucket(of: space, key: key) { touched.insert(bucket) }
        let rows = try run("DELETE FROM \(table) WHERE space = $1 AND key = $2 RETURNING 1", Self.bindings(space, key), doing: "deleting a record")
        return rows.first != nil
    }
}

/// Key ranges as SQL bounds.
enum PostgreSQLRange {
    /// The least key above every key that starts with `prefix`; nil when there is none (an empty prefix, or one of
    /// 0xFF bytes only), so that the range has no upper bound.
    static func end(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        var end = prefix
        while let last = end.last {
            if last < 0xFF {
                end[end.count - 1] = last + 1
                return end
            }
            end.removeLast()
        }
        return nil
    }
}
