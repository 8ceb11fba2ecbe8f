/// A read that a backend serves in one call: every record of a few key ranges, and a few key spaces' sizes, from one
/// snapshot.
///
/// A flow knows before it reads anything which ranges it may need (a lookup: its buckets, the account's refresh
/// tokens, ID tokens, profiles and leases, the client's app metadata; an ingest: the new token's bucket, the keys of
/// the records it replaces, the next stretch of its expiry sweep), so it asks for all of them at once and judges what
/// comes back. A backend across a network serves the plan in one round trip; a local one reads it in one read
/// transaction. What the domain then reads of the records goes through ``FetchedRecordReader`` (or, for a write,
/// ``PlannedWrite``), which serves the plan's ranges and refuses any read outside them.
package struct ReadPlan: Sendable, Hashable {
    /// One range of one key space.
    package struct Range: Sendable, Hashable {
        package let space: KeySpace
        /// For a prefix range, the prefix every key starts with; for a scan, the first key it may hold.
        package let start: [UInt8]
        /// nil: every key starting with `start`. A number: the first `limit` keys at or after `start`, in key order
        /// (fewer at the end of the space).
        package let limit: Int?

        package init(space: KeySpace, prefix: [UInt8]) {
            self.space = space
            start = prefix
            limit = nil
        }

        package init(space: KeySpace, from start: [UInt8], limit: Int) {
            self.space = space
            self.start = start
            self.limit = max(limit, 1)
        }

        package var prefix: [UInt8] { start }
        package var isScan: Bool { limit != nil }
    }

    /// A record whose presence a count depends on (``addCount(of:onlyIfPresent:)``).
    package struct Record: Sendable, Hashable {
        package let space: KeySpace
        package let key: [UInt8]

        package init(space: KeySpace, key: [UInt8]) {
            self.space = space
            self.key = key
        }
    }

    package private(set) var ranges: [Range] = []
    /// Key spaces whose entry count the plan reads (``FetchedRecords/count(of:)``).
    package private(set) var counts: [KeySpace] = []
    /// Whether the fetch also reads the store's revision floor (``FetchedRecords/revisionFloor``), for a planned write
    /// that may create records on a store that has one (``RevisionFloorReading``).
    package var readsRevisionFloor = false
    /// The counts taken only when a record is present (their key space's count is absent from the fetch otherwise).
    package private(set) var countConditions: [KeySpace: Record] = [:]

    package init() {}

    /// Adds a prefix range, unless one already in the plan covers it.
    package mutating func add(_ space: KeySpace, prefix: [UInt8]) {
        let range = Range(space: space, prefix: prefix)
        guard !ranges.contains(where: { $0.covers(range) }) else { return }
        ranges.removeAll { range.covers($0) }
        ranges.append(range)
    }

    /// Adds the record stored under `key`, if any: the range of keys starting with `key` (keys of one space have one
    /// length, FORMAT.md §4.3, so it holds that record at most, or the bucket's records for a bucket prefix).
    package mutating func add(_ space: KeySpace, key: [UInt8]) { add(space, prefix: key) }

    /// Adds a scan: the first `limit` records at or after `start`.
    package mutating func add(_ space: KeySpace, from start: [UInt8], limit: Int) {
        let range = Range(space: space, from: start, limit: limit)
        if !ranges.contains(range) { ranges.append(range) }
    }

    /// Adds the count of `space`'s entries.
    package mutating func addCount(of space: KeySpace) {
        if !counts.contains(space) { counts.append(space) }
        countConditions[space] = nil
    }

    /// Adds the count of `space`'s entries, taken only when `record` is present: a count that only matters when it
    /// is (an access-token cap's) costs a store without that record nothing, where counting a key space of a server's
    /// table reads every row of it. The plan should also read `record` itself, so that a write plan that relied on
    /// its absence is checked against it.
    package mutating func addCount(of space: KeySpace, onlyIfPresent record: Record) {
        guard !counts.contains(space) else { return }
        counts.append(space)
        countConditions[space] = record
    }
}

extension ReadPlan.Range {
    /// Whether every key of `other` is also in this range (prefix ranges only: a scan's extent is known once fetched).
    package func covers(_ other: ReadPlan.Range) -> Bool {
        limit == nil && other.limit == nil && space == other.space && other.prefix.starts(with: prefix)
    }

    /// Whether a prefix read of `key`'s extensions is inside this prefix range.
    func contains(space: KeySpace, key: some Collection<UInt8>) -> Bool { limit == nil && self.space == space && key.starts(with: prefix) }
}

/// A backend that serves a ``ReadPlan`` in one call, without blocking the caller's thread while it waits (a backend
/// across a network). A backend without this capability serves a plan synchronously in one read transaction
/// (``RecordBackend/fetchSynchronously(_:)``): LMDB never waits for a writer, so a read may run on any thread.
package protocol RangeFetching: AnyObject, Sendable {
    func fetch(_ plan: ReadPlan) async throws -> FetchedRecords
    /// The same fetch, blocking the calling thread while it waits: what a synchronous caller uses, still one round
    /// trip rather than one per read of a transaction.
    func fetchBlocking(_ plan: ReadPlan) throws -> FetchedRecords
}

extension RecordReading {
    /// Collects `plan`'s records and counts from this snapshot (a read transaction, or a write transaction that
    /// checks what a write plan expects).
    /// - Parameters:
    ///   - ranges: The indices of the plan's ranges to read (the others stay empty); nil for all.
    ///   - counts: The key spaces of the plan's counts to read; nil for all.
    package func collect(_ plan: ReadPlan, ranges: Set<Int>? = nil, counts: Set<KeySpace>? = nil) throws -> FetchedRecords {
        var builder = FetchedRecords.Builder(plan: plan, snapshotID: snapshotID)
        for (index, range) in plan.ranges.enumerated() where ranges?.contains(index) ?? true {
            if let limit = range.limit {
                var taken = 0
                try forEach(in: range.space, from: range.start) { key, value in
                    key.withUnsafeBytes { key in value.withUnsafeBytes { value in builder.append(range: index, key: key, value: value) } }
                    taken += 1
                    return taken < limit
                }
            } else {
                try forEach(in: range.space, prefix: range.prefix) { key, value in
                    key.withUnsafeBytes { key in value.withUnsafeBytes { value in builder.append(range: index, key: key, value: value) } }
                    return true
                }
            }
        }
        for space in plan.counts where counts?.contains(space) ?? true {
            if let condition = plan.countConditions[space], try withValue(in: condition.space, forKey: condition.key, { _ in true }) == nil { continue }
            builder.counts[space] = try count(in: space)
        }
        return builder.build()
    }
}

extension RecordBackend {
    /// The records of `plan`'s ranges, in one call of the backend's own fetch when it has one, else copied out of one
    /// read transaction.
    package func fetchSynchronously(_ plan: ReadPlan) throws -> FetchedRecords {
        if let fetching = self as? any RangeFetching { return try fetching.fetchBlocking(plan) }
        return try read { try $0.collect(plan) }
    }

    /// The records of `plan`'s ranges, in one call: the backend's own fetch when it has one, else one read
    /// transaction.
    package func fetch(_ plan: ReadPlan) async throws -> FetchedRecords {
        if let fetching = self as? any RangeFetching { return try await fetching.fetch(plan) }
        return try fetchSynchronously(plan)
    }
}
