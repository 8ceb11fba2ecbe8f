/// The records a ``ReadPlan`` fetched: each range's records in key order, and the counts it asked for, as owned bytes
/// of one snapshot.
///
/// The bytes sit in one allocation that lives as long as this object, so that a view handed out by
/// ``FetchedRecordReader`` stays valid as long as the reader does, as a view into a read transaction does.
package final class FetchedRecords: @unchecked Sendable {  // immutable after init; the buffer is only read
    struct Entry {
        let range: Int
        let key: Swift.Range<Int>
        let value: Swift.Range<Int>
        /// The version a backend keeps beside the record, if it keeps one (a server's row version, unique per write);
        /// 0 otherwise. A write plan's check on such a backend compares versions instead of sealed bytes.
        let version: Int64
    }

    package let plan: ReadPlan
    /// The snapshot the records were read from (``RecordReading/snapshotID``).
    package let snapshotID: Int
    /// Every range's entries, range after range, each range's in key order.
    let entries: [Entry]
    /// Where each range's entries are in `entries`, by the range's index in the plan.
    let bounds: [Swift.Range<Int>]
    let counts: [KeySpace: Int]
    /// The store's revision floor as of the fetch (``RevisionFloorReading``), when the plan asked for it and the
    /// backend keeps one.
    package let revisionFloor: UInt64?
    /// What the records depend on, when the backend versions them by bucket (``BucketVersioning``).
    package let bucketStamp: BucketStamp?
    private let bytes: UnsafeMutableRawBufferPointer

    private init(
        plan: ReadPlan, snapshotID: Int, entries: [Entry], counts: [KeySpace: Int], revisionFloor: UInt64?, bucketStamp: BucketStamp?,
        bytes: [UInt8]
    ) {
        self.plan = plan
        self.revisionFloor = revisionFloor
        self.bucketStamp = bucketStamp
        self.snapshotID = snapshotID
        // A backend may deliver ranges in any order, each in key order: the sort is stable.
        let entries = entries.enumerated().sorted { ($0.element.range, $0.offset) < ($1.element.range, $1.offset) }.map(\.element)
        self.entries = entries
        var bounds: [Swift.Range<Int>] = []
        var start = 0
        for index in plan.ranges.indices {
            var end = start
            while end < entries.count, entries[end].range == index { end += 1 }
            bounds.append(start..<end)
            start = end
        }
        self.bounds = bounds
        self.counts = counts
        self.bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        bytes.withUnsafeBytes { self.bytes.copyMemory(from: $0) }
    }

    deinit { bytes.deallocate() }

    /// How many records were fetched, over all ranges.
    package var count: Int { entries.count }

    func view(_ range: Swift.Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[range]) }

    /// Calls `body` with each record of the plan's range `index`, in key order; the views live as long as this object.
    func forEachRecord(ofRange index: Int, _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) rethrows {
        for entry in entries[bounds[index]] { try body(view(entry.key), view(entry.value)) }
    }

    /// Calls `body` with the key and the backend's version of each record of the plan's range `index`, in key order.
    package func forEachVersion(ofRange index: Int, _ body: (_ key: UnsafeRawBufferPointer, _ version: Int64) throws -> Void) rethrows {
        for entry in entries[bounds[index]] { try body(view(entry.key), entry.version) }
    }

    /// The count of `space`'s entries, if the plan asked for it.
    package func count(of space: KeySpace) -> Int? { counts[space] }

    /// Whether a scan of the plan stopped at its limit, so that keys after its last one were not fetched.
    func isTruncated(_ index: Int) -> Bool {
        guard let limit = plan.ranges[index].limit else { return false }
        return bounds[index].count >= limit
    }

    /// Whether `other`, collected for the same plan, holds exactly these records (keys and sealed bytes) in the
    /// ranges `indices`, and these counts of `spaces`: what a write plan checks before it applies (``WritePlan``).
    package func holdsTheSameRecords(as other: FetchedRecords, inRanges indices: Set<Int>, counts spaces: Set<KeySpace>) -> Bool {
        guard plan == other.plan else { return false }
        for space in spaces where counts[space] != other.counts[space] { return false }
        for index in indices {
            let mine = entries[bounds[index]], theirs = other.entries[other.bounds[index]]
            guard mine.count == theirs.count else { return false }
            for (entry, stored) in zip(mine, theirs) {
                guard view(entry.key).elementsEqual(other.view(stored.key)), view(entry.value).elementsEqual(other.view(stored.value))
                else { return false }
            }
        }
        return true
    }

    /// Collects the records of a plan's ranges, range by range, each in key order.
    package struct Builder {
        let plan: ReadPlan
        let snapshotID: Int
        var entries: [Entry] = []
        var bytes: [UInt8] = []
        package var counts: [KeySpace: Int] = [:]
        package var revisionFloor: UInt64? = nil
        package var bucketStamp: BucketStamp? = nil

        package init(plan: ReadPlan, snapshotID: Int) {
            self.plan = plan
            self.snapshotID = snapshotID
        }

        /// Appends a record of range `range` (its index in the plan); records of one range come in key order.
        /// - Parameter version: The backend's version of the record, if it keeps one.
        package mutating func append(range: Int, key: some Collection<UInt8>, value: some Collection<UInt8>, version: Int64 = 0) {
            let keyStart = bytes.count
            bytes.append(contentsOf: key)
            let valueStart = bytes.count
            bytes.append(contentsOf: value)
            entries.append(Entry(range: range, key: keyStart..<valueStart, value: valueStart..<bytes.count, version: version))
        }

        package func build() -> FetchedRecords {
            FetchedRecords(
                plan: plan, snapshotID: snapshotID, entries: entries, counts: counts, revisionFloor: revisionFloor, bucketStamp: bucketStamp,
                bytes: bytes
            )
        }
    }
}

/// The reads of one flow, served from what its plan fetched: a prefix read, a key lookup or a scan inside a fetched
/// range answers as the backend would have (bytewise key order, the same snapshot); any read outside the plan's ranges
/// is refused, so that a plan that misses a range the flow needs fails loudly instead of answering from half the data.
package struct FetchedRecordReader: RecordReading {
    let records: FetchedRecords

    package init(_ records: FetchedRecords) { self.records = records }

    package var snapshotID: Int { records.snapshotID }

    package var bucketStamp: BucketStamp? { records.bucketStamp }

    /// The plan's prefix range that holds every key of `space` starting with `prefix`.
    private func range(in space: KeySpace, holding prefix: some Collection<UInt8>) throws(StorageError) -> Int {
        guard let index = records.plan.ranges.firstIndex(where: { $0.contains(space: space, key: prefix) }) else {
            throw PlanMiss.prefix(space, prefix: Array(prefix)).error
        }
        return index
    }

    package func withValue<R>(in space: KeySpace, forKey key: [UInt8], _ body: (RawSpan) throws -> R) throws -> R? {
        let index = try range(in: space, holding: key)
        for entry in records.entries[records.bounds[index]] where records.view(entry.key).elementsEqual(key) {
            return try body(RawSpan(_unsafeBytes: records.view(entry.value)))
        }
        return nil
    }

    package func forEach(
        in space: KeySpace, prefix: [UInt8], _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws {
        let index = try range(in: space, holding: prefix)
        for entry in records.entries[records.bounds[index]] {
            let key = records.view(entry.key)
            guard key.starts(with: prefix) else { continue }
            if try !body(RawSpan(_unsafeBytes: key), RawSpan(_unsafeBytes: records.view(entry.value))) { return }
        }
    }

    /// Served from a scan of the plan that starts at `start`; reading past its last record, when the scan stopped at
    /// its limit, is refused.
    package func forEach(
        in space: KeySpace, from start: [UInt8], _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws {
        guard let index = records.plan.ranges.firstIndex(where: { $0.isScan && $0.space == space && $0.start == start }) else {
            throw PlanMiss.scan(space, from: start).error
        }
        for entry in records.entries[records.bounds[index]] {
            if try !body(RawSpan(_unsafeBytes: records.view(entry.key)), RawSpan(_unsafeBytes: records.view(entry.value))) { return }
        }
        if records.isTruncated(index) { throw PlanMiss.scan(space, from: start).error }
    }

    package func count(in space: KeySpace) throws -> Int {
        guard let count = records.count(of: space) else { throw PlanMiss.count(space).error }
        return count
    }
}

/// A read a fetched plan cannot serve: a flow asked for a range its plan did not name. For a lookup it is a bug
/// (`.internalError`); a planned write that meets one widens its plan or runs as a transaction instead
/// (``PlannedWrite``).
package enum PlanMiss: Sendable, Equatable {
    case prefix(KeySpace, prefix: [UInt8])
    case scan(KeySpace, from: [UInt8])
    case count(KeySpace)

    var error: StorageError {
        let what =
            switch self {
            case .prefix(let space, _): "a prefix read of \(space.name)"
            case .scan(let space, _): "a scan of \(space.name) past what was fetched"
            case .count(let space): "a count of \(space.name)"
            }
        var error = StorageError(.internalError, "a read outside the ranges its plan fetched: " + what)
        error.missedPlan = self
        return error
    }
}
