/// A write transaction that makes nothing: it serves a flow's reads from what a ``ReadPlan`` fetched, with the flow's
/// own writes applied over them, and records those writes as a ``WritePlan``.
///
/// The flow runs the same code it runs in a backend's write transaction, so a planned write and a direct one decide
/// alike; only the changes go to the backend, in one call, checked against what was read (``WritePlan``). A read
/// outside the plan's ranges is refused as in ``FetchedRecordReader``, and remembered in ``missed``, so that the caller
/// can tell a plan too narrow for this write (an eviction's random sample) from a failure of the flow's own.
///
/// Views are valid until the next write of this transaction, as in a backend's: values sit at stable addresses, and a
/// scan walks a copy of its key space's entries, so that the flow may write while it scans.
package final class PlannedWrite: RecordWriting, RevisionFloorReading {
    package let fetched: FetchedRecords
    /// The fetched records with this transaction's writes made on them.
    private var state: InMemoryRecordBackend.State
    private var counts: [KeySpace: Int]
    /// For each scan of the plan that stopped at its limit, the last key it fetched: keys after it are unknown.
    private let scanEnds: [Int: [UInt8]]
    package private(set) var mutations: [WritePlan.Mutation] = []
    /// The first read the plan could not serve, if any.
    package private(set) var missed: PlanMiss?
    /// The plan's ranges and counts that served a read: what the decision rests on, and so what the backend checks
    /// again before it applies (a range fetched and never read cannot have changed the decision).
    private var readRanges: Set<Int> = []
    private var readCounts: Set<KeySpace> = []
    /// The error of a reserved put whose fill failed: as in a backend's transaction, nothing of it may be applied.
    package private(set) var failure: (any Error)?

    /// - Throws: ``StorageError`` `.invalidArgument` for a fetched key this transaction cannot hold (a backend with
    ///   other key limits than LMDB's): a record left out would read as absent.
    package init(_ fetched: FetchedRecords) throws {
        self.fetched = fetched
        var state = InMemoryRecordBackend.State(spaces: [:], commitID: fetched.snapshotID)
        var scanEnds: [Int: [UInt8]] = [:]
        for (index, range) in fetched.plan.ranges.enumerated() {
            var last: [UInt8]? = nil
            try fetched.forEachRecord(ofRange: index) { key, value in
                // Ranges may overlap (a scan crosses a bucket): one snapshot, so equal keys hold equal values.
                last = Array(key)
                try state.store(InMemoryRecordBackend.Bytes(copying: value), in: range.space, key: last!)
            }
            if fetched.isTruncated(index), let last { scanEnds[index] = last }
        }
        self.state = state
        self.scanEnds = scanEnds
        counts = fetched.counts
    }

    /// The writes made so far, to be applied if what they were decided on is still what the store holds.
    /// - Parameter freeingSpace: The writes only remove records (``RecordBackend/write(freeingSpace:_:)``).
    package func plan(freeingSpace: Bool = false) -> WritePlan {
        WritePlan(expected: fetched, checking: readRanges, counts: readCounts, mutations: mutations, freeingSpace: freeingSpace)
    }

    package var snapshotID: Int { fetched.snapshotID }

    /// The floor fetched with the plan (``ReadPlan/readsRevisionFloor``).
    /// - Throws: ``StorageError`` `.internalError` when the plan did not ask for it: a new record's revision is
    ///   never guessed.
    package func revisionFloor() throws -> UInt64 {
        guard let floor = fetched.revisionFloor else {
            throw StorageError(.internalError, "a planned write creates a record, but its plan did not read the store's revision floor")
        }
        return floor
    }

    private func miss(_ miss: PlanMiss) -> StorageError {
        if missed == nil { missed = miss }
        return miss.error
    }

    /// Whether a read of `key` (or, unless `exactly`, of every key starting with it) is inside what the plan fetched:
    /// a prefix range holding it, or a scan's window that starts before it and ends at it or after it (after all its
    /// extensions, for a prefix), or at the end of the space. Every such range counts as read.
    private func covers(_ space: KeySpace, _ key: [UInt8], exactly: Bool) -> Bool {
        var covered = false
        for (index, range) in fetched.plan.ranges.enumerated() where range.space == space {
            var holds = range.contains(space: space, key: key)
            if !holds, range.isScan, !key.lexicographicallyPrecedes(range.start) {
                holds = scanEnds[index].map { end in
                    exactly ? !end.lexicographicallyPrecedes(key) : key.lexicographicallyPrecedes(end) && !end.starts(with: key)
                } ?? true
            }
            if holds {
                readRanges.insert(index)
                covered = true
            }
        }
        return covered
    }

    package func withValue<R>(in space: KeySpace, forKey key: [UInt8], _ body: (RawSpan) throws -> R) throws -> R? {
        guard covers(space, key, exactly: true) else { throw miss(.prefix(space, prefix: key)) }
        let entries = state.entries(space)
        guard case (let index, true) = try InMemoryRecordBackend.State.position(of: key, in: entries) else { return nil }
        return try body(RawSpan(_unsafeBytes: entries[index].value.view))
    }

    package func forEach(
        in space: KeySpace, prefix: [UInt8], _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws {
        guard covers(space, prefix, exactly: false) else { throw miss(.prefix(space, prefix: prefix)) }
        try state.walk(space, from: prefix, prefix: prefix) { key, value in try body(RawSpan(_unsafeBytes: key), RawSpan(_unsafeBytes: value)) }
    }

    /// Served from a scan of the plan that starts at `start`, within the keys it fetched.
    package func forEach(
        in space: KeySpace, from start: [UInt8], _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws {
        guard let index = fetched.plan.ranges.firstIndex(where: { $0.isScan && $0.space == space && $0.start == start }) else {
            throw miss(.scan(space, from: start))
        }
        readRanges.insert(index)
        let end = scanEnds[index]
        var stopped = false
        try state.walk(space, from: start, prefix: []) { key, value in
            // Past the window's last key lie keys that were not fetched.
            if let end, end.lexicographicallyPrecedes(key) { return false }
            stopped = try !body(RawSpan(_unsafeBytes: key), RawSpan(_unsafeBytes: value))
            return !stopped
        }
        if !stopped, end != nil { throw miss(.scan(space, from: start)) }
    }

    package func count(in space: KeySpace) throws -> Int {
        guard let count = counts[space] else { throw miss(.count(space)) }
        readCounts.insert(space)
        return count
    }

    package func put(in space: KeySpace, key: [UInt8], value: UnsafeRawBufferPointer) throws {
        try store(InMemoryRecordBackend.Bytes(copying: value), in: space, key: key)
    }

    package func put(in space: KeySpace, key: [UInt8], reservingCount count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
        try store(try InMemoryRecordBackend.Bytes(count: count, filledBy: fill, failure: &failure), in: space, key: key)
    }

    package func delete(in space: KeySpace, key: [UInt8]) throws -> Bool {
        guard covers(space, key, exactly: true) else { throw miss(.prefix(space, prefix: key)) }
        guard try state.remove(in: space, key: key) else { return false }
        mutations.append(.delete(space, key: key))
        counts[space]? -= 1
        return true
    }

    /// A put needs no read, but the count it changes must be known, and so must whether the key was there: a key
    /// outside the plan is refused (the flow would not know what it replaces).
    private func store(_ value: InMemoryRecordBackend.Bytes, in space: KeySpace, key: [UInt8]) throws {
        guard covers(space, key, exactly: true) else { throw miss(.prefix(space, prefix: key)) }
        let existed = try withValue(in: space, forKey: key) { _ in true } ?? false
        try state.store(value, in: space, key: key)
        mutations.append(.put(space, key: key, value: Array(value.view)))
        if !existed { counts[space]? += 1 }
    }
}
