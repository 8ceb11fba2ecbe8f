import CLMDB
import Synchronization

/// A small stack of reset read-only `MDB_txn` handles, reused with `mdb_txn_renew`.
///
/// lmdb.h, `mdb_txn_reset`: it "saves allocation overhead if the process will start a new read-only
/// transaction soon, and also locking overhead if MDB_NOTLS is in use". With `MDB_NOTLS` a reset handle
/// keeps its reader-table slot and may be renewed on any thread, so the pool is shared by all threads.
/// Because pooled handles hold slots, the pool is capped well below `maxReaders`.
final class ReadTransactionPool: Sendable {
    /// `MDB_txn *` is not `Sendable`; a handle in the pool is reset (owned by nobody) and only ever
    /// popped by one thread, under the mutex.
    private struct Handle: @unchecked Sendable {
        let txn: OpaquePointer
    }

    private let handles = Mutex<[Handle]>([])
    private let capacity: Int

    init(maxReaders: Int) {
        capacity = min(16, max(0, maxReaders / 4))
    }

    /// A live read transaction: a renewed pooled handle, or a new one.
    /// Callers hold the environment's gate shared.
    func checkOut(environment env: OpaquePointer) -> Result<OpaquePointer, LMDBError> {
        if let pooled = handles.withLock({ $0.popLast() }) {
            if lmdb_txn_renew(pooled.txn) == MDB_SUCCESS {
                return .success(pooled.txn)
            }
            // A handle that failed to renew is discarded; mdb_txn_abort is valid on a reset handle and
            // frees its slot. A fresh begin then reports the real condition (e.g. MDB_MAP_RESIZED).
            lmdb_txn_abort(pooled.txn)
        }
        var txn: OpaquePointer?
        let rc = lmdb_txn_begin(env, readOnly: true, &txn)
        guard rc == MDB_SUCCESS, let txn else { return .failure(rc == MDB_SUCCESS ? .invalidArgument : LMDBError(code: rc)) }
        return .success(txn)
    }

    /// Ends a read transaction: reset and keep it, or abort it when the pool is full.
    func checkIn(_ txn: OpaquePointer) {
        lmdb_txn_reset(txn)
        let kept = handles.withLock { handles -> Bool in
            guard handles.count < capacity else { return false }
            handles.append(Handle(txn: txn))
            return true
        }
        if !kept { lmdb_txn_abort(txn) }
    }

    /// Aborts every pooled handle (frees their reader slots). Called before `mdb_env_close`.
    func drain() {
        let drained = handles.withLock { handles -> [Handle] in
            defer { handles.removeAll() }
            return handles
        }
        for handle in drained { lmdb_txn_abort(handle.txn) }
    }
}
