/// The records a ``ReadPlan`` fetched: each range's records in key order, as owned bytes of one snapshot.
///
/// The bytes sit in one allocation that lives as long as this object, so that a view handed out by
/// ``FetchedRecordReader`` stays valid as long as the reader does, as a view into a read transaction does.
package final class FetchedRecords: @unchecked Sendable {  // immutable after init; the buffer is only read
    struct Entry {
        let range: Int
        let key: Swift.Range<Int>
        let value: Swift.Range<Int>
    }

    package let plan: ReadPlan
    /// The snapshot the records were read from (``RecordReading/snapshotID``).
    package let snapshotID: Int
    let entries: [Entry]
    private let bytes: UnsafeMutableRawBufferPointer

    private init(plan: ReadPlan, snapshotID: Int, entries: [Entry], bytes: [UInt8]) {
        self.plan = plan
        self.snapshotID = snapshotID
        self.entries = entries
        self.bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        bytes.withUnsafeBytes { self.bytes.copyMemory(from: $0) }
    }

    deinit { bytes.deallocate() }

    /// How many records were fetched, over all ranges.
    package var count: Int { entries.count }

    func view(_ range: Swift.Range<Int>) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[range]) }

    /// Collects the records of a plan's ranges, range by range, each in key order.
    package struct Builder {
        let plan: ReadPlan
        let snapshotID: Int
        var entries: [Entry] = []
        var bytes: [UInt8] = []

        package init(plan: ReadPlan, snapshotID: Int) {
            self.plan = plan
            self.snapshotID = snapshotID
        }

        /// Appends a record of range `range` (its index in the plan); records of one range come in key order.
        package mutating func append(range: Int, key: some Collection<UInt8>, value: some Collection<UInt8>) {
            let keyStart = bytes.count
            bytes.append(contentsOf: key)
            let valueStart = bytes.count
            bytes.append(contentsOf: value)
            entries.append(Entry(range: range, key: keyStart..<valueStart, value: valueStart..<bytes.count))
        }

        package func build() -> FetchedRecords {
            FetchedRecords(plan: plan, snapshotID: snapshotID, entries: entries, bytes: bytes)
        }
    }
}

/// The reads of one lookup, served from what its plan fetched: a prefix read or a key lookup inside a fetched range
/// answers as the backend would have (bytewise key order, the same snapshot); any read outside the plan's ranges is
/// refused, so that a plan that misses a range the lookup needs fails loudly instead of answering from half the data.
package struct FetchedRecordReader: RecordReading {
    let records: FetchedRecords

    package init(_ records: FetchedRecords) { self.records = records }

    package var snapshotID: Int { records.snapshotID }

    /// The plan's range that holds every key of `space` starting with `prefix`.
    private func range(in space: KeySpace, holding prefix: some Collection<UInt8>) throws(StorageError) -> Int {
        guard let index = records.plan.ranges.firstIndex(where: { $0.contains(space: space, key: prefix) }) else {
            throw StorageError(.internalError, "a read of \(space) outside the ranges its plan fetched")
        }
        return index
    }

    package func withValue<R>(in space: KeySpace, forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let index = try range(in: space, holding: key)
        for entry in records.entries where entry.range == index {
            let stored = records.view(entry.key)
            if stored.elementsEqual(key) { return try body(records.view(entry.value)) }
        }
        return nil
    }

    package func forEach(
        in space: KeySpace, prefix: [UInt8], _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let index = try range(in: space, holding: prefix)
        for entry in records.entries where entry.range == index {
            let key = records.view(entry.key)
            guard key.starts(with: prefix) else { continue }
            if try !body(key, records.view(entry.value)) { return }
        }
    }

    package func forEach(
        in space: KeySpace, from start: [UInt8], _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        throw StorageError(.internalError, "a scan of \(space) from a key: a fetched plan serves prefix reads only")
    }

    package func count(in space: KeySpace) throws -> Int {
        throw StorageError(.internalError, "a count of \(space): a fetched plan serves prefix reads only")
    }
}
