import Glibc
import Synchronization

/// The records in this process's memory: the same sealed bytes an on-disk store holds, gone with the last reference.
///
/// For caches that must not touch the disk (a short-lived tool, a test), and as the second implementation of the
/// seam: every domain rule runs on it exactly as on LMDB. Semantics follow LMDB's where the store relies on them:
/// bytewise key order, snapshot reads that never wait (a read sees the last commit before it began), one writer at a
/// time with a nested write on the same thread refused, a write that throws leaving nothing behind, views valid until
/// the transaction's next write or its end, and LMDB's key-size limits (1 to 511 bytes).
package final class InMemoryRecordBackend: RecordBackend {
    /// Bytes at a stable address, lent out as views. Values are sealed records (ciphertext), keys are blind-index
    /// digests: nothing here is plaintext, so nothing needs wiping.
    final class Bytes: @unchecked Sendable {  // written once (by its creator, before it is shared), then only read
        let buffer: UnsafeMutableRawBufferPointer
        let count: Int

        /// `count` zero bytes, for the creator to fill.
        init(count: Int) {
            self.count = count
            buffer = .allocate(byteCount: max(count, 1), alignment: 16)
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
        }

        /// `count` bytes written by `fill`, for a reserved put: a fill that throws is remembered in `failure` (the
        /// first one), since the transaction it belongs to must then not commit, even if its caller catches the error.
        convenience init(
            count: Int, filledBy fill: (UnsafeMutableRawBufferPointer) throws -> Void, failure: inout (any Error)?
        ) throws {
            guard count >= 0 else { throw StorageError(.invalidArgument, "a negative value size") }
            self.init(count: count)
            do {
                try fill(UnsafeMutableRawBufferPointer(rebasing: buffer[..<count]))
            } catch {
                failure = failure ?? error
                throw error
            }
        }

        convenience init(copying bytes: UnsafeRawBufferPointer) {
            self.init(count: bytes.count)
            if let base = bytes.baseAddress { buffer.baseAddress!.copyMemory(from: base, byteCount: bytes.count) }
        }

        var view: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: buffer.baseAddress, count: count) }

        deinit { buffer.deallocate() }
    }

    struct Entry: Sendable {
        let key: Bytes
        var value: Bytes
    }

    /// One committed state: per key space, the entries in key order. Copy-on-write, so a snapshot is a copy.
    struct State: Sendable {
        var spaces: [KeySpace: [Entry]]
        var commitID: Int
    }

    package let location: String
    /// A sorted array gains nothing from the shorter key: every record under its own.
    package var lonePlacement: LonePlacement { .underOwnKey }
    private let committed: Mutex<State>
    /// Serialises writers; the id of the thread that holds it, to refuse a nested write instead of deadlocking.
    private let writer = Mutex<Void>(())
    private let writerThread = Atomic<UInt>(0)

    package init(name: String) {
        location = name
        committed = Mutex(State(spaces: Dictionary(uniqueKeysWithValues: KeySpace.allCases.map { ($0, []) }), commitID: 1))
    }

    package func read<R>(_ body: (any RecordReading) throws -> R) throws -> R {
        try body(Snapshot(state: committed.withLock { $0 }))
    }

    /// Memory has no cap of its own, so `freeingSpace` changes nothing.
    package func write<R>(freeingSpace: Bool, _ body: (any RecordWriting) throws -> R) throws -> R {
        let thread = UInt(pthread_self())
        if writerThread.load(ordering: .acquiring) == thread {
            throw StorageError(.unsupportedEnvironment, "a write transaction was started inside another one on the same thread")
        }
        return try writer.withLock { _ in
            writerThread.store(thread, ordering: .releasing)
            defer { writerThread.store(0, ordering: .releasing) }
            let transaction = WriteTransaction(state: committed.withLock { $0 })
            let result = try body(transaction)
            if let failure = transaction.failure { throw failure }
            transaction.state.commitID += 1
            let state = transaction.state
            committed.withLock { $0 = state }
            return result
        }
    }

    package var lastCommitID: Int { committed.withLock { $0.commitID } }

    package func usage() -> StorageUsage {
        let state = committed.withLock { $0 }
        let used = state.spaces.values.reduce(0) { total, entries in
            entries.reduce(total) { $0 + $1.key.count + $1.value.count }
        }
        return StorageUsage(currentCapacity: 0, maximumCapacity: 0, usedBytes: used, readersInUse: 0, maxReaders: 0)
    }

    package func statistics() throws -> StorageStatistics {
        let state = committed.withLock { $0 }
        return StorageStatistics(
            spaces: state.spaces.mapValues { StorageStatistics.Space(entries: $0.count) }, pageSize: 0, usage: usage(), readers: [],
            files: [:]
        )
    }

    package func integrityProblem() throws -> String? { nil }

    /// A read transaction: one committed state, held for the transaction's life (so every view stays valid).
    fileprivate struct Snapshot: StateReading {
        let state: State
    }

    /// A write transaction: a private copy of the committed state, published whole at commit. Its scans walk a copy
    /// of a key space's entries, so `body` may write (delete the entry it was given, as LMDB allows).
    private final class WriteTransaction: StateReading, RecordWriting {
        var state: State
        /// The error of a reserved put whose fill failed: the transaction must not commit a zeroed value.
        var failure: (any Error)?

        init(state: State) { self.state = state }

        /// The commit this transaction makes if it commits (as an LMDB write transaction's id is).
        var snapshotID: Int { state.commitID + 1 }

        func put(in space: KeySpace, key: [UInt8], value: UnsafeRawBufferPointer) throws {
            try store(Bytes(copying: value), in: space, key: key)
        }

        func put(in space: KeySpace, key: [UInt8], reservingCount count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws -> Void) throws {
            try store(try Bytes(count: count, filledBy: fill, failure: &failure), in: space, key: key)
        }

        func delete(in space: KeySpace, key: [UInt8]) throws -> Bool { try state.remove(in: space, key: key) }

        private func store(_ value: Bytes, in space: KeySpace, key: [UInt8]) throws { try state.store(value, in: space, key: key) }
    }
}

extension InMemoryRecordBackend.State {
    /// Stores `value` under `key`, replacing any value there.
    mutating func store(_ value: InMemoryRecordBackend.Bytes, in space: KeySpace, key: [UInt8]) throws {
        var entries = entries(space)
        let (index, found) = try Self.position(of: key, in: entries)
        spaces[space] = nil  // keeps the array uniquely referenced while it changes
        if found {
            entries[index].value = value
        } else {
            entries.insert(Entry(key: key.withUnsafeBytes { InMemoryRecordBackend.Bytes(copying: $0) }, value: value), at: index)
        }
        spaces[space] = entries
    }

    /// Removes the entry under `key`; returns whether there was one.
    mutating func remove(in space: KeySpace, key: [UInt8]) throws -> Bool {
        var entries = entries(space)
        guard case (let index, true) = try Self.position(of: key, in: entries) else { return false }
        spaces[space] = nil
        entries.remove(at: index)
        spaces[space] = entries
        return true
    }
}

/// Reads of a transaction over an in-memory state, read-only or not.
private protocol StateReading: RecordReading {
    var state: InMemoryRecordBackend.State { get }
}

extension StateReading {
    func withValue<R>(in space: KeySpace, forKey key: [UInt8], _ body: (RawSpan) throws -> R) throws -> R? {
        let entries = state.entries(space)
        guard case (let index, true) = try InMemoryRecordBackend.State.position(of: key, in: entries) else { return nil }
        return try body(RawSpan(_unsafeBytes: entries[index].value.view))
    }

    func forEach(
        in space: KeySpace, prefix: [UInt8], _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws {
        try state.walk(space, from: prefix, prefix: prefix) { key, value in try body(RawSpan(_unsafeBytes: key), RawSpan(_unsafeBytes: value)) }
    }

    func forEach(
        in space: KeySpace, from start: [UInt8], _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws {
        try state.walk(space, from: start, prefix: []) { key, value in try body(RawSpan(_unsafeBytes: key), RawSpan(_unsafeBytes: value)) }
    }

    func count(in space: KeySpace) throws -> Int { state.entries(space).count }

    var snapshotID: Int { state.commitID }
}

extension InMemoryRecordBackend.State {
    typealias Entry = InMemoryRecordBackend.Entry

    func entries(_ space: KeySpace) -> [Entry] { spaces[space] ?? [] }

    /// Bytewise order, a key before its extensions: LMDB's default order.
    static func compare(_ lhs: UnsafeRawBufferPointer, _ rhs: [UInt8]) -> Int {
        rhs.withUnsafeBytes { rhs in
            let common = min(lhs.count, rhs.count)
            if common > 0 {
                let order = memcmp(lhs.baseAddress!, rhs.baseAddress!, common)
                if order != 0 { return Int(order) }
            }
            return lhs.count - rhs.count
        }
    }

    /// The index of the first entry whose key is at least `key`.
    static func lowerBound(_ entries: [Entry], _ key: [UInt8]) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if compare(entries[middle].key.view, key) < 0 { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// Where `key` is in `entries` (sorted), or where it would go, after checking it.
    static func position(of key: [UInt8], in entries: [Entry]) throws -> (index: Int, found: Bool) {
        try StorageKeyLimits.check(key)
        let index = lowerBound(entries, key)
        return (index, index < entries.count && compare(entries[index].key.view, key) == 0)
    }

    /// The entries of `space` from the first key at least `start` on, while they begin with `prefix`, on a copy of
    /// the array: the entries (and so the views) outlive any write `body` makes.
    func walk(
        _ space: KeySpace, from start: [UInt8], prefix: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try StorageKeyLimits.check(start, allowingEmpty: true)
        let entries = entries(space)
        var index = Self.lowerBound(entries, start)
        while index < entries.count {
            let entry = entries[index]
            let key = entry.key.view
            guard key.count >= prefix.count, prefix.isEmpty || Self.compare(UnsafeRawBufferPointer(rebasing: key[..<prefix.count]), prefix) == 0
            else { return }
            guard try body(key, entry.value.view) else { return }
            index += 1
        }
    }
}
