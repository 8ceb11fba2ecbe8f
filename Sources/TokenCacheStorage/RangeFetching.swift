/// A read that a backend serves in one call: every record of a few key ranges, from one snapshot.
///
/// A lookup knows before it reads anything which ranges it may need (its buckets, the account's refresh tokens, ID
/// tokens, profiles and leases, the client's app metadata), so it asks for all of them at once and judges what
/// comes back. A backend across a network serves the plan in one round trip; a local one reads it in one read
/// transaction. What the domain then reads of the records goes through ``FetchedRecordReader``, which serves the
/// plan's ranges and refuses any read outside them.
package struct ReadPlan: Sendable, Hashable {
    /// One range: every record of `space` whose key starts with `prefix`.
    package struct Range: Sendable, Hashable {
        package let space: KeySpace
        package let prefix: [UInt8]

        package init(space: KeySpace, prefix: [UInt8]) {
            self.space = space
            self.prefix = prefix
        }
    }

    package private(set) var ranges: [Range] = []

    package init() {}

    /// Adds a range, unless one already in the plan covers it.
    package mutating func add(_ space: KeySpace, prefix: [UInt8]) {
        let range = Range(space: space, prefix: prefix)
        guard !ranges.contains(where: { $0.covers(range) }) else { return }
        ranges.removeAll { range.covers($0) }
        ranges.append(range)
    }
}

extension ReadPlan.Range {
    /// Whether every key of `other` is also in this range.
    package func covers(_ other: ReadPlan.Range) -> Bool { space == other.space && other.prefix.starts(with: prefix) }

    func contains(space: KeySpace, key: some Collection<UInt8>) -> Bool { self.space == space && key.starts(with: prefix) }
}

/// A backend that serves a ``ReadPlan`` in one call, without blocking the caller's thread while it waits (a backend
/// across a network). A backend without this capability serves a plan synchronously in one read transaction
/// (``RecordBackend/fetchSynchronously(_:)``): LMDB never waits for a writer, so a read may run on any thread.
package protocol RangeFetching: AnyObject, Sendable {
    func fetch(_ plan: ReadPlan) async throws -> FetchedRecords
}

extension RecordBackend {
    /// The records of `plan`'s ranges, copied out of one read transaction.
    package func fetchSynchronously(_ plan: ReadPlan) throws -> FetchedRecords {
        try read { transaction in
            var builder = FetchedRecords.Builder(plan: plan, snapshotID: transaction.snapshotID)
            for (index, range) in plan.ranges.enumerated() {
                try transaction.forEach(in: range.space, prefix: range.prefix) { key, value in
                    builder.append(range: index, key: key, value: value)
                    return true
                }
            }
            return builder.build()
        }
    }

    /// The records of `plan`'s ranges, in one call: the backend's own fetch when it has one, else one read
    /// transaction.
    package func fetch(_ plan: ReadPlan) async throws -> FetchedRecords {
        if let fetching = self as? any RangeFetching { return try await fetching.fetch(plan) }
        return try fetchSynchronously(plan)
    }
}
