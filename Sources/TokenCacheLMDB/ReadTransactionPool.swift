import CLMDB
import Synchronization

/// Reset read-only `MDB_txn` handles, reused with `mdb_txn_renew`, one slot per thread stripe.
///
/// lmdb.h, `mdb_txn_reset`: it "saves allocation overhead if the process will start a new read-only
/// transaction soon, and also locking overhead if MDB_NOTLS is in use". With `MDB_NOTLS` a reset handle
/// keeps its reader-table slot and may be renewed on any thread, so the pool is shared by all threads.
/// Because pooled handles hold slots, the pool is capped well below `maxReaders`.
///
/// Each slot is an atomic word on its own cache line (``StripedCounters``): a thread takes a handle from, and
/// returns it to, its own stripe's slot first, so threads reading at once do not write one shared word (a mutex
/// around a stack did, on every transaction). A thread whose slot is empty looks in the others; a handle whose home
/// slot is taken goes to any free one, else is aborted.
final class ReadTransactionPool: Sendable {
    /// Slots hold `MDB_txn *` bits, or 0 when empty.
    private let slots = StripedCounters()
    private let capacity: Int

    init(maxReaders: Int) {
        capacity = min(StripedCounters.stripes, max(0, maxReaders / 4))
    }

    /// A live read transaction: a renewed pooled handle, or a new one.
    /// Callers hold the environment's gate shared.
    func checkOut(environment env: OpaquePointer, stripe: Int) -> Result<OpaquePointer, LMDBError> {
        for offset in 0..<capacity {
            let word = slots[slot(stripe, offset)]
            // A plain load first: an exchange (even of an empty slot) would write another thread's cache line.
            guard word.pointee.load(ordering: .relaxed) != 0 else { continue }
            let bits = word.pointee.exchange(0, ordering: .acquiring)
            guard bits != 0, let pooled = OpaquePointer(bitPattern: bits) else { continue }
            if lmdb_txn_renew(pooled) == MDB_SUCCESS {
                return .success(pooled)
            }
            // A handle that failed to renew is discarded; mdb_txn_abort is valid on a reset handle and
            // frees its slot. A fresh begin then reports the real condition (e.g. MDB_MAP_RESIZED).
            lmdb_txn_abort(pooled)
            break
        }
        var txn: OpaquePointer?
        let rc = lmdb_txn_begin(env, readOnly: true, &txn)
        guard rc == MDB_SUCCESS, let txn else { return .failure(rc == MDB_SUCCESS ? .invalidArgument : LMDBError(code: rc)) }
        return .success(txn)
    }

    /// Ends a read transaction: reset and keep it, or abort it when every slot is taken.
    func checkIn(_ txn: OpaquePointer, stripe: Int) {
        lmdb_txn_reset(txn)
        let bits = Int(bitPattern: UnsafeRawPointer(txn))
        for offset in 0..<capacity {
            let word = slots[slot(stripe, offset)]
            guard word.pointee.load(ordering: .relaxed) == 0 else { continue }  // a failed compare-exchange still writes the line
            if word.pointee.compareExchange(expected: 0, desired: bits, ordering: .releasing).exchanged { return }
        }
        lmdb_txn_abort(txn)
    }

    /// Aborts every pooled handle (frees their reader slots). Called before `mdb_env_close`.
    func drain() {
        for index in 0..<StripedCounters.stripes {
            let bits = slots[index].pointee.exchange(0, ordering: .acquiring)
            if bits != 0, let handle = OpaquePointer(bitPattern: bits) { lmdb_txn_abort(handle) }
        }
    }

    private func slot(_ stripe: Int, _ offset: Int) -> Int { (stripe + offset) % max(capacity, 1) }
}
