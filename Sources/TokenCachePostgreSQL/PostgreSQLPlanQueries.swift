import NIOCore
import PostgresNIO
import TokenCacheStorage

/// The one statement of each async call: a read plan's fetch and a write plan's apply.
enum PostgreSQLPlanQueries {
    /// The range number of the revision floor's row in a fetch: below every count's.
    static let floorRow: Int32 = -1_000_000
    /// Every range of `plan` and every count, in one statement (one snapshot, one round trip): rows of
    /// `(range, key, value, version)` ordered by range and key, a count as `(-1 - its index, NULL, NULL, count)`, and the
    /// revision floor, when the plan reads it, as `(floorRow, NULL, NULL, the row-version sequence's last value)`.
    /// Each range is a subquery of its own, so that its bounds are index conditions.
    static func fetch(_ plan: ReadPlan, table: String, versions: String) -> PostgresQuery {
        var binds = PostgresBindings()
        func parameter(_ value: some PostgresDynamicTypeEncodable) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        var parts: [String] = []
        for (index, range) in plan.ranges.enumerated() {
            var sql = "(SELECT \(index)::int4 AS r, key, value, version FROM \(table) WHERE space = \(parameter(Int16(range.space.rawValue))) "
            sql += "AND key >= \(parameter(ByteBuffer(bytes: range.start)))"
            if let limit = range.limit {
                sql += " ORDER BY key LIMIT \(limit))"
            } else {
                if let end = PostgreSQLRange.end(ofPrefix: range.prefix) { sql += " AND key < \(parameter(ByteBuffer(bytes: end)))" }
                sql += ")"
            }
            parts.append(sql)
        }
        for (index, space) in plan.counts.enumerated() {
            parts.append(
                "(SELECT \(-1 - index)::int4, NULL::bytea, NULL::bytea, count(*)::int8 FROM \(table) WHERE space = \(parameter(Int16(space.rawValue))))"
            )
        }
        if plan.readsRevisionFloor {
            parts.append("(SELECT \(floorRow)::int4, NULL::bytea, NULL::bytea, last_value FROM \(versions))")
        }
        if parts.isEmpty { parts.append("(SELECT 0::int4 AS r, NULL::bytea AS key, NULL::bytea AS value, 0::int8 AS version WHERE false)") }
        let sql = "SELECT * FROM (" + parts.joined(separator: " UNION ALL ") + ") AS fetched ORDER BY r, key"
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }

    /// The fetched rows of ``fetch(_:table:)`` as the plan's records, each with its row version.
    static func records(of plan: ReadPlan, from rows: PostgresQueryResult, snapshotID: Int) throws -> FetchedRecords {
        var builder = FetchedRecords.Builder(plan: plan, snapshotID: snapshotID)
        for row in rows {
            let (range, key, value, version) = try row.decode((Int32, ByteBuffer?, ByteBuffer?, Int64).self)
            if range == floorRow {
                builder.revisionFloor = UInt64(clamping: version)
            } else if range < 0 {
                builder.counts[plan.counts[Int(-range) - 1]] = Int(version)
            } else if let key, let value {
                builder.append(range: Int(range), key: key.readableBytesView, value: value.readableBytesView, version: version)
            }
        }
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
