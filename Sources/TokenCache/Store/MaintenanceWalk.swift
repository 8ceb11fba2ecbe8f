internal import TokenCacheStorage
internal import TokenCacheRecords

/// A job over a whole key space, done in bounded write transactions and resumable after any interruption.
///
/// A cursor record in `meta` says where the next transaction starts; its presence says the job is unfinished. Each
/// transaction checks that the store's header is the one this store was opened with, reads the cursor, lets `step`
/// do one batch from there, and stores where the next batch starts, or removes the cursor when `step` reports the
/// end. Every transaction must leave the store valid, so that a crash between two loses nothing and any writable
/// open (or a later call) resumes. Transactions stay small because one over a large store needs room for a second
/// copy of the tree it rewrites (at a million tokens, the default map ran out).
///
/// The format-1 to 2 upgrade's lone-token placement runs on it (FORMAT.md §7); a data-key rotation (§6.5) keeps its
/// cursor with it and runs steps of its own, whose cursor names a database as well as a key and whose last step also
/// rewrites the header.
struct MaintenanceWalk {
    /// The cursor's key in `meta`: names the job.
    let cursorKey: [UInt8]

    /// Records the job as started from the first key, in `txn` (with whatever else starts it).
    func begin(in txn: any RecordWriting) throws {
        try txn.put(in: KeySpace.meta, key: cursorKey, value: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// Whether the job is recorded as unfinished in `txn`'s snapshot.
    func isPending(in txn: any RecordReading) throws -> Bool {
        try txn.withValue(in: KeySpace.meta, forKey: cursorKey) { _ in true } ?? false
    }

    /// Runs the job's remaining batches, one write transaction each. `step` does one batch from key `start` (empty:
    /// the first key) and returns the key the next batch starts at, or nil when it reached the end.
    func run(on store: RecordStore, step: (_ start: [UInt8], _ txn: any RecordWriting) throws -> [UInt8]?) throws {
        var done = false
        while !done {
            done = try store.backend.write { txn in
                try store.checkHeaderUnchanged(in: txn)
                guard let start = try txn.withValue(in: KeySpace.meta, forKey: cursorKey, { $0.withUnsafeBytes { Array($0) } }) else {
                    return true  // another process finished it
                }
                if let next = try step(start, txn) {
                    try next.withUnsafeBytes { try txn.put(in: KeySpace.meta, key: cursorKey, value: $0) }
                    return false
                }
                try txn.delete(in: KeySpace.meta, key: cursorKey)
                return true
            }
        }
    }
}
