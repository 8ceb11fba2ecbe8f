import NIOCore
import PostgresNIO
import TokenCacheStorage

/// The one statement of each plan call: a read plan's fetch and a write plan's apply.
enum PostgreSQLPlanQueries {
    /// The range number of the revision floor's row in a fetch: below every count's.
    static let floorRow: Int32 = -1_000_000
    /// The range number of the first bucket version's row in a fetch (the others follow downwards): below the floor's.
    static let firstBucketRow: Int32 = -2_000_001
    /// The fetch statement on `table`: one text whatever the plan, so that a connection prepares it once and the
    /// server plans it once (its generic plan) instead of parsing and planning every lookup, which took about half a
    /// lookup's server time.
    ///
    /// The plan's ranges come as arrays, one element per range: a range's rows are an index scan of its own
    /// (`space = … AND key >= first AND key < bound`, the first `limit` of them, 0 for all), run once per array
    /// element by a lateral join, so the plan is that index scan whatever the table's size and whatever the values (a
    /// generic plan cannot turn into a sequential or parallel scan of the table). The counts come as arrays too, each
    /// taken only if its condition record is present (an empty condition key: always).
    ///
    /// Rows: `(range, key, value, version)` ordered by range and key; a count as `(-1 - its index, NULL, NULL,
    /// count)`, its count NULL when its condition record is absent; when `$8` is true the revision floor as
    /// `(floorRow, NULL, NULL, the row-version sequence's last value)`; and for each bucket of `$9` its version as
    /// `(firstBucketRow - its index, NULL, NULL, version)`, 0 for a bucket never written. One statement reads all in
    /// one snapshot, so the versions are those of the records returned.
    static func fetchStatement(names: PostgreSQLSchema.Names) -> String {
        let table = names.records
        return """
        SELECT * FROM (\
        SELECT x.i::int4 - 1 AS part, f.key, f.value, f.version \
        FROM unnest($1::int2[], $2::bytea[], $3::bytea[], $4::int4[]) WITH ORDINALITY AS x(space, first, bound, lim, i) \
        CROSS JOIN LATERAL (SELECT key, value, version FROM \(table) \
        WHERE space = x.space AND key >= x.first AND key < x.bound ORDER BY key LIMIT nullif(x.lim, 0)) f \
        UNION ALL \
        SELECT -c.i::int4, NULL::bytea, NULL::bytea, \
        CASE WHEN length(c.if_key) = 0 OR EXISTS (SELECT FROM \(table) WHERE space = c.if_space AND key = c.if_key) \
        THEN (SELECT count(*) FROM \(table) WHERE space = c.space) END \
        FROM unnest($5::int2[], $6::int2[], $7::bytea[]) WITH ORDINALITY AS c(space, if_space, if_key, i) \
        UNION ALL \
        SELECT \(floorRow)::int4, NULL::bytea, NULL::bytea, last_value FROM \(names.rowVersion) WHERE $8::bool \
        UNION ALL \
        SELECT \(firstBucketRow + 1)::int4 - b.i::int4, NULL::bytea, NULL::bytea, \
        coalesce((SELECT version FROM \(names.buckets) WHERE bucket = b.bucket), 0) \
        FROM unnest($9::bytea[]) WITH ORDINALITY AS b(bucket, i)\
        ) AS fetched ORDER BY part, key
        """
    }

    /// A bound above every key a store accepts (keys are at most ``StorageKeyLimits/maximumSize`` bytes): the upper
    /// bound of a range that has none.
    static let unbounded = ByteBuffer(repeating: 0xFF, count: StorageKeyLimits.maximumSize + 1)

    /// The values of ``fetchStatement(names:)`` for `plan`, reading the versions of `buckets`.
    static func fetchValues(_ plan: ReadPlan, buckets: [[UInt8]]) -> [PostgresData] {
        var space: [Int16] = [], first: [ByteBuffer] = [], bound: [ByteBuffer] = [], limit: [Int32] = []
        for range in plan.ranges {
            space.append(Int16(range.space.rawValue))
            first.append(ByteBuffer(bytes: range.start))
            if range.limit == nil, let end = PostgreSQLRange.end(ofPrefix: range.prefix) {
                bound.append(ByteBuffer(bytes: end))
            } else {
                bound.append(unbounded)
            }
            limit.append(Int32(range.limit ?? 0))
        }
        var countSpace: [Int16] = [], conditionSpace: [Int16] = [], conditionKey: [ByteBuffer] = []
        for counted in plan.counts {
            countSpace.append(Int16(counted.rawValue))
            let condition = plan.countConditions[counted]
            conditionSpace.append(Int16(condition?.space.rawValue ?? 0))
            conditionKey.append(ByteBuffer(bytes: condition?.key ?? []))
        }
        return [
            value(space), value(first), value(bound), value(limit), value(countSpace), value(conditionSpace), value(conditionKey),
            PostgresData(bool: plan.readsRevisionFloor), value(buckets.map { ByteBuffer(bytes: $0) }),
        ]
    }

    /// `array` in the server's binary format, as a prepared statement's execution takes its values.
    private static func value<Element: PostgresArrayEncodable>(_ array: [Element]) -> PostgresData {
        var buffer = ByteBuffer()
        // Arrays of integers and byte strings encode without failing.
        try! array.encode(into: &buffer, context: .default)
        return PostgresData(type: [Element].psqlType, formatCode: [Element].psqlFormat, value: buffer)
    }

    /// The fetched rows of ``fetchStatement(names:)`` as the plan's records, each with its row version, stamped by
    /// `stamping` from the versions of the buckets asked for (in their order).
    static func records(
        of plan: ReadPlan, from rows: some Sequence<PostgresRow>, snapshotID: Int, stamping: ([Int64]) -> BucketStamp?
    ) throws -> FetchedRecords {
        var builder = FetchedRecords.Builder(plan: plan, snapshotID: snapshotID)
        var bucketVersions: [Int64] = []
        for row in rows {
            // postgres-nio asks for every result in binary, but a statement prepared through `prepare(query:)` keeps
            // the columns' formats of the statement's description, which are text: read the cells as what they are.
            var cells = Array(row)
            guard cells.count == 4 else { throw StorageError(.ioFailure, "a fetch returned rows of \(cells.count) columns, not 4") }
            for index in cells.indices { cells[index].format = .binary }
            let range = try cells[0].decode(Int32.self)
            let key = try cells[1].bytes.map { _ in try cells[1].decode(ByteBuffer.self) }
            let value = try cells[2].bytes.map { _ in try cells[2].decode(ByteBuffer.self) }
            let version = try cells[3].bytes.map { _ in try cells[3].decode(Int64.self) }
            if range <= firstBucketRow {
                let index = Int(firstBucketRow - range)
                if index >= bucketVersions.count { bucketVersions += repeatElement(0, count: index + 1 - bucketVersions.count) }
                bucketVersions[index] = version ?? 0
            } else if range == floorRow {
                if let version { builder.revisionFloor = UInt64(clamping: version) }
            } else if range < 0 {
                if let version { builder.counts[plan.counts[Int(-range) - 1]] = Int(version) }
            } else if let key, let value, let version {
                builder.append(range: Int(range), key: key.readableBytesView, value: value.readableBytesView, version: version)
            }
        }
        builder.bucketStamp = stamping(bucketVersions)
        return builder.build()
    }

    /// The call of `apply_plan` for `plan`, or nil when its records carry no row versions (it was fetched through a
    /// synchronous read), so that only a transaction comparing its bytes can check it.
    static func apply(_ plan: WritePlan, schema: String) -> PostgresQuery? {
        let fetched = plan.expected
        var checkSpace: [Int16] = [], checkStart: [ByteBuffer] = [], checkEnd: [ByteBuffer] = [], checkLimit: [Int32] = []
        var checkExpected: [ByteBuffer] = []
        for index in plan.checkedRanges.sorted() {
            let range = fetched.plan.ranges[index]
            checkSpace.append(Int16(range.space.rawValue))
            checkStart.append(ByteBuffer(bytes: range.start))
            checkEnd.append(ByteBuffer(bytes: range.limit == nil ? PostgreSQLRange.end(ofPrefix: range.prefix) ?? [] : []))
            checkLimit.append(Int32(range.limit ?? 0))
            var expected = ByteBuffer()
            var versioned = true
            fetched.forEachVersion(ofRange: index) { key, version in
                if version == 0 { versioned = false }
                expected.writeInteger(Int32(key.count))
                expected.writeBytes(key)
                expected.writeInteger(version)
            }
            guard versioned else { return nil }
            checkExpected.append(expected)
        }
        var countSpace: [Int16] = [], countExpected: [Int64] = []
        for space in plan.checkedCounts.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let count = fetched.count(of: space) else { continue }
            countSpace.append(Int16(space.rawValue))
            countExpected.append(Int64(count))
        }
        var put: [Bool] = [], space: [Int16] = [], key: [ByteBuffer] = [], value: [ByteBuffer] = []
        for mutation in plan.mutations {
            switch mutation {
            case .put(let kind, let bytes, let sealed):
                put.append(true)
                space.append(Int16(kind.rawValue))
                key.append(ByteBuffer(bytes: bytes))
                value.append(ByteBuffer(bytes: sealed))
            case .delete(let kind, let bytes):
                put.append(false)
                space.append(Int16(kind.rawValue))
                key.append(ByteBuffer(bytes: bytes))
                value.append(ByteBuffer())
            }
        }
        var binds = PostgresBindings(capacity: 11)
        binds.append(checkSpace)
        binds.append(checkStart)
        binds.append(checkEnd)
        binds.append(checkLimit)
        binds.append(checkExpected)
        binds.append(countSpace)
        binds.append(countExpected)
        binds.append(put)
        binds.append(space)
        binds.append(key)
        binds.append(value)
        return PostgresQuery(unsafeSQL: "SELECT \(schema).apply_plan($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)", binds: binds)
    }
}
