import TokenCacheSodium
import TokenCacheStorage

/// Which bucket a record belongs to, as the schema's trigger computes it (``PostgreSQLSchema/changeTracking(in:)``,
/// FORMAT.md §2.2): the two must agree, so both live beside each other's description.
///
/// A record of the five entity spaces belongs to the bucket of its key's first 16 bytes (`P(hid)` for an account's
/// records, `D("app", client)` for an application's metadata); the header belongs to the global bucket (empty); the
/// other `meta` rows (leases, the cap, cursors) to none, since no answer depends on them.
enum PostgreSQLBuckets {
    /// The bytes of a key that name its bucket.
    static let idLength = 16
    /// The global bucket, which every answer depends on.
    static let global: [UInt8] = []
    /// The header's key in `meta` (FORMAT.md §3), the one `meta` row in a bucket. The storage layer knows no record
    /// names; a test holds this equal to the records layer's.
    static let headerKey: [UInt8] = Array("header".utf8)
    /// ``headerKey`` as lowercase hex digits, as the trigger's SQL spells it.
    static var headerKeyHex: String { Hex.encode(headerKey) }

    /// The bucket a write of `key` in `space` touches; nil for none.
    static func bucket(of space: KeySpace, key: [UInt8]) -> [UInt8]? {
        if space == .meta { return key == headerKey ? global : nil }
        return Array(key.prefix(idLength))
    }

    /// The bucket a write plan's change touches.
    static func bucket(of mutation: WritePlan.Mutation) -> [UInt8]? {
        switch mutation {
        case .put(let space, let key, _), .delete(let space, let key): bucket(of: space, key: key)
        }
    }

    /// The buckets the records `plan` reads lie in, the global one first; nil when a range of an entity space is wider
    /// than one bucket (a scan, a short prefix), whose answer only the commit id can judge.
    static func dependencies(of plan: ReadPlan) -> [[UInt8]]? {
        var buckets: [[UInt8]] = [global]
        for range in plan.ranges where range.space != .meta {
            guard !range.isScan, range.prefix.count >= idLength else { return nil }
            let bucket = Array(range.prefix.prefix(idLength))
            if !buckets.contains(bucket) { buckets.append(bucket) }
        }
        return buckets
    }
}
