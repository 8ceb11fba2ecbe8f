import CLMDB
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only view of one LMDB snapshot, valid only inside the `Environment.read` (or `write`) closure
/// that received it.
///
/// lmdb.h: "A transaction and its cursors must only be used by a single thread". The closure runs
/// synchronously on the calling thread, the type is not `Sendable`, and once the closure returns the
/// object is invalidated: any later use traps instead of touching a recycled `MDB_txn`.
///
/// Byte views passed to closures point into the memory map (or, in a write transaction, into dirty
/// pages). lmdb.h: "Values returned from the database are valid only until a subsequent update
/// operation, or the end of the transaction." Copy what you need before returning from the closure, and
/// do not keep using a view after calling a mutating method of the same `WriteTransaction`.
package class ReadTransaction {
    /// The `MDB_txn *`; nil once the owning closure has returned.
    private var handle: OpaquePointer?
    private let environmentSerial: UInt64
    private let maxKeySize: Int
    /// The mapping of the store's data file, once ``releaseResidentPages(mappedAt:)`` has looked it up.
    private var mapRegion: MemoryMapRegion? = nil

    init(handle: OpaquePointer, environment: Environment) {
        self.handle = handle
        self.environmentSerial = environment.serial
        self.maxKeySize = environment.maxKeySize
    }

    /// Called by `Environment` when the closure returns, before the handle is reset, aborted or committed.
    final func invalidate() {
        handle = nil
    }

    final var liveHandle: OpaquePointer {
        guard let handle else {
            preconditionFailure(
                "TokenCacheLMDB: a transaction was used after the read/write closure that received it returned"
            )
        }
        return handle
    }

    final func dbi(_ database: Database) throws(LMDBError) -> UInt32 {
        guard database.owner == environmentSerial else { throw .badDbi }
        return database.dbi
    }

    /// The id of the snapshot this transaction reads: LMDB's transaction id, which every committed write
    /// transaction of any process increases (`mdb_txn_id`). Two read transactions with the same id see exactly
    /// the same data; a larger id means that at least one write committed in between.
    package final var snapshotID: Int { lmdb_txn_id(liveHandle) }

    /// lmdb.h: keys are 1...`mdb_env_get_maxkeysize()` bytes. Checked here so LMDB never sees a bad size.
    final func validate(key: [UInt8]) throws(LMDBError) {
        guard !key.isEmpty, key.count <= maxKeySize else { throw .badValSize }
    }

    /// Calls `body` with the stored value for `key`, or returns nil if the key is absent.
    ///
    /// The buffer is a borrowed view into the map, valid only while `body` runs.
    /// - Throws: `LMDBError.badValSize` for an empty or over-long key, other `LMDBError`s from LMDB,
    ///   or whatever `body` throws (unchanged).
    package final func withValue<R>(
        in database: Database,
        forKey key: [UInt8],
        _ body: (UnsafeRawBufferPointer) throws -> R
    ) throws -> R? {
        let txn = liveHandle
        let dbi = try dbi(database)
        try validate(key: key)
        var value = MDB_val()
        let rc = key.withUnsafeBytes { keyBytes -> Int32 in
            // SAFETY: mdb_get only reads the key ("@param[in] key") and only during the call.
            var keyVal = MDB_val(borrowing: keyBytes)
            return lmdb_get(txn, dbi, &keyVal, &value)
        }
        if rc == MDB_NOTFOUND { return nil }
        try LMDBError.check(rc)
        // SAFETY: lmdb.h: "Values returned from the database are valid only until a subsequent update
        // operation, or the end of the transaction." The transaction outlives `body`, and the view is not
        // returned from this function.
        return try body(UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size))
    }

    /// Iterates, in key order, the entries whose key starts with `prefix` (an empty prefix visits the whole
    /// database). `body` returns true to continue and false to stop. Key and value views point into the map
    /// and stay valid, as lmdb.h says of every returned value, until the next update of this transaction or its
    /// end: a caller may keep one past the call of `body` (the silent lookup keeps its chosen token's) as long as it
    /// does not write in between.
    ///
    /// Uses one cursor: `MDB_SET_RANGE` on the prefix (or `MDB_FIRST`), then `MDB_NEXT` until a key no
    /// longer has the prefix. Keys are compared with `memcmp` by LMDB, so the matches are contiguous.
    /// In a write transaction `body` may delete or overwrite the entry it was given; LMDB repositions
    /// the cursor. Use `Array(key)` before such a call if the key is still needed afterwards.
    /// - Throws: `LMDBError.badValSize` if `prefix` is longer than the maximum key size, other
    ///   `LMDBError`s from LMDB, or whatever `body` throws (unchanged).
    package final func forEach(
        in database: Database,
        prefix: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try walk(database, from: prefix, prefix: prefix, body)
    }

    /// Calls `body` with every entry whose key is at least `start` (in LMDB's order), until `body` returns false:
    /// for work done in several transactions, each resuming where the last stopped. Otherwise as
    /// ``forEach(in:prefix:_:)``.
    package final func forEach(
        in database: Database,
        from start: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        try walk(database, from: start, prefix: [], body)
    }

    /// The entries from the first key at least `start` on, while they begin with `prefix`. Inlined: the silent
    /// lookup's range goes through here.
    @inline(__always)
    private func walk(
        _ database: Database,
        from start: [UInt8],
        prefix: [UInt8],
        _ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        let txn = liveHandle
        let dbi = try dbi(database)
        guard start.count <= maxKeySize else { throw LMDBError.badValSize }

        var cursorPointer: OpaquePointer?
        try LMDBError.check(lmdb_cursor_open(txn, dbi, &cursorPointer))
        guard let cursor = cursorPointer else { throw LMDBError.invalidArgument }
        // lmdb.h: "A cursor in a read-only transaction must be closed explicitly"; a cursor in a write
        // transaction "can be closed before its transaction ends".
        defer { lmdb_cursor_close(cursor) }

        var key = MDB_val()
        var value = MDB_val()
        var rc = start.withUnsafeBytes { startBytes -> Int32 in
            if startBytes.isEmpty {
                return lmdb_cursor_get(cursor, &key, &value, .first)
            }
            // SAFETY: MDB_SET_RANGE reads the search key during the call only, then points `key` at the
            // stored key inside the map; `startBytes` is not referenced afterwards.
            key = MDB_val(borrowing: startBytes)
            return lmdb_cursor_get(cursor, &key, &value, .setRange)
        }
        while rc == MDB_SUCCESS {
            // SAFETY: as in `withValue`, the views are valid until the next update or the end of the
            // transaction, and are only lent to `body`.
            let keyBytes = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            guard keyBytes.count >= prefix.count,
                prefix.withUnsafeBytes({ $0.isEmpty || memcmp(keyBytes.baseAddress!, $0.baseAddress!, $0.count) == 0 })
            else { return }
            let valueBytes = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
            guard try body(keyBytes, valueBytes) else { return }
            rc = lmdb_cursor_get(cursor, &key, &value, .next)
        }
        if rc != MDB_NOTFOUND { throw LMDBError(code: rc) }
    }

    /// Starts loading a view returned by this transaction (a value in the map) into the CPU caches, without
    /// waiting for it: a caller that will read the view after another LMDB step (`forEach` moving to the next key)
    /// overlaps the two memory waits. A hint only: it changes no result.
    package static func prefetch(_ view: UnsafeRawBufferPointer) {
        guard let base = view.baseAddress else { return }
        tc_prefetch_read(base, view.count)
    }

    /// Drops this process's mapping of the map's pages (`madvise(MADV_DONTNEED)` over the whole map). They stay in
    /// the page cache, and the next read of one maps it again from there, so no result changes: the map is a
    /// read-only shared file mapping (never `MDB_WRITEMAP`), and no page this snapshot can see is rewritten while it
    /// lives. A scan of a whole store touches every page of the file; calling this every few thousand records keeps
    /// the scanning process's resident memory bounded instead of growing to the size of the file.
    ///
    /// `address` is any view this transaction lent from the map (LMDB does not tell where its map is: `mdb_env_info`
    /// reports an address only for `MDB_FIXEDMAP`). The map is the mapping of `/proc/self/maps` that holds it, taken
    /// only if it is a read-only shared mapping of a `data.mdb` file: a view from a write transaction's dirty page
    /// lies in the heap, which is left alone.
    package final func releaseResidentPages(mappedAt address: UnsafeRawPointer) {
        _ = liveHandle
        // The map cannot move while this transaction lives, so the region found first serves every later call.
        if mapRegion.map({ !$0.contains(address) }) ?? true { mapRegion = MemoryMapRegion.containing(address) }
        guard let region = mapRegion, region.isReadOnlySharedDataFile else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: region.start), Int(region.end - region.start), MADV_DONTNEED)
    }

    /// Number of entries in `database` (`mdb_stat`'s `ms_entries`) as of this transaction's snapshot.
    package final func count(in database: Database) throws -> Int {
        let txn = liveHandle
        let dbi = try dbi(database)
        var stat = MDB_stat()
        try LMDBError.check(lmdb_stat(txn, dbi, &stat))
        return Int(stat.ms_entries)
    }
}

@available(*, unavailable, message: "LMDB transactions belong to one thread and one closure")
extension ReadTransaction: Sendable {}

/// A read-write transaction, valid only inside the `Environment.write` closure that received it.
/// Committed when the closure returns normally, aborted when it throws.
package final class WriteTransaction: ReadTransaction {
    /// Set when LMDB reported `MDB_MAP_FULL`: `Environment.write` aborts, grows the map and re-runs the body.
    var hitMapFull = false
    /// The first failure of a write operation. After most LMDB write errors the transaction is marked
    /// failed (`MDB_TXN_ERROR`) and can only be aborted, so if the body swallows the error, `write`
    /// aborts and throws this instead of committing.
    var failure: LMDBError?
    /// True while a `put(reservingCount:)` fill closure runs; any update then would invalidate its buffer.
    private var isFilling = false

    private func recordFailure(_ rc: Int32) -> LMDBError {
        let error = LMDBError(code: rc)
        if rc == MDB_MAP_FULL { hitMapFull = true }
        if failure == nil { failure = error }
        return error
    }

    private func preconditionNotFilling() {
        precondition(
            !isFilling,
            "TokenCacheLMDB: the transaction was updated inside a put(reservingCount:) fill closure, which invalidates the reserved buffer"
        )
    }

    /// Stores `value` under `key`, replacing any previous value.
    /// - Throws: `LMDBError.badValSize` for an empty or over-long key, `LMDBError.mapFull` at the map-size
    ///   cap (after growth was attempted), other `LMDBError`s from LMDB.
    package func put(in database: Database, key: [UInt8], value: UnsafeRawBufferPointer) throws {
        let txn = liveHandle
        preconditionNotFilling()
        let dbi = try dbi(database)
        try validate(key: key)
        let rc = key.withUnsafeBytes { keyBytes -> Int32 in
            withNonNullBase(value) { valueBytes -> Int32 in
                // SAFETY: mdb_put copies key and data into the transaction's pages during the call; without
                // MDB_RESERVE it does not write through the data pointer.
                var keyVal = MDB_val(borrowing: keyBytes)
                var valueVal = MDB_val(borrowing: valueBytes)
                return lmdb_put(txn, dbi, &keyVal, &valueVal, reserve: false)
            }
        }
        guard rc == MDB_SUCCESS else { throw recordFailure(rc) }
    }

    /// `MDB_RESERVE`: reserves `count` bytes for `key` and lets `fill` write them in place, so ciphertext
    /// is produced directly in the page that gets written, with no intermediate copy.
    ///
    /// The buffer is zeroed before `fill` runs: with `MDB_RESERVE` LMDB skips its own initialisation
    /// ("the caller is expected to overwrite all of the memory that was reserved"), so a short fill must not
    /// persist stale heap bytes. `fill` must not update this transaction (that traps). If `fill` throws,
    /// the buffer is zeroed again, the error is rethrown, and the transaction can no longer commit
    /// (`write` aborts it; if the body swallows the error, `write` throws `LMDBError.badTxn`).
    package func put(
        in database: Database,
        key: [UInt8],
        reservingCount count: Int,
        fill: (UnsafeMutableRawBufferPointer) throws -> Void
    ) throws {
        let txn = liveHandle
        preconditionNotFilling()
        let dbi = try dbi(database)
        try validate(key: key)
        guard count >= 0 else { throw LMDBError.invalidArgument }
        var reserved = MDB_val(mv_size: count, mv_data: nil)
        let rc = key.withUnsafeBytes { keyBytes -> Int32 in
            // SAFETY: the key is only read during the call; `reserved` is [in,out]: LMDB stores the address
            // of the reserved space in it.
            var keyVal = MDB_val(borrowing: keyBytes)
            return lmdb_put(txn, dbi, &keyVal, &reserved, reserve: true)
        }
        guard rc == MDB_SUCCESS else { throw recordFailure(rc) }

        // SAFETY: lmdb.h, MDB_RESERVE: "return a pointer to the reserved space, which the caller can fill in
        // later - before the next update operation or the transaction ends". `fill` runs now, updates are
        // blocked while it runs, and the buffer is not used after it returns.
        let buffer = UnsafeMutableRawBufferPointer(start: reserved.mv_data, count: count)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        isFilling = true
        defer { isFilling = false }
        do {
            try fill(buffer)
        } catch {
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            if failure == nil { failure = .badTxn }
            throw error
        }
    }

    /// Deletes `key`. Returns false if it was absent.
    @discardableResult
    package func delete(in database: Database, key: [UInt8]) throws -> Bool {
        let txn = liveHandle
        preconditionNotFilling()
        let dbi = try dbi(database)
        try validate(key: key)
        let rc = key.withUnsafeBytes { keyBytes -> Int32 in
            // SAFETY: mdb_del only reads the key during the call.
            var keyVal = MDB_val(borrowing: keyBytes)
            return lmdb_del(txn, dbi, &keyVal)
        }
        if rc == MDB_NOTFOUND { return false }
        guard rc == MDB_SUCCESS else { throw recordFailure(rc) }
        return true
    }

    /// Empties `database` (`mdb_drop(txn, dbi, 0)`); the handle stays valid.
    package func removeAll(in database: Database) throws {
        let txn = liveHandle
        preconditionNotFilling()
        let dbi = try dbi(database)
        let rc = lmdb_drop(txn, dbi)
        guard rc == MDB_SUCCESS else { throw recordFailure(rc) }
    }
}

extension MDB_val {
    /// An `MDB_val` describing caller-owned bytes. LMDB's API takes `void *` even for inputs it only reads.
    init(borrowing bytes: UnsafeRawBufferPointer) {
        self.init(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
    }
}

/// An empty buffer may have a nil base address; LMDB memcpy()s from it, so give it a valid one.
private func withNonNullBase<R>(_ bytes: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R) -> R {
    if bytes.baseAddress != nil { return body(bytes) }
    var placeholder: UInt8 = 0
    return withUnsafeBytes(of: &placeholder) { body(UnsafeRawBufferPointer(rebasing: $0[0..<0])) }
}
