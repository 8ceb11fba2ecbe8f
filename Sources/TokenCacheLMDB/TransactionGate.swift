#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The process-wide reader/writer lock that makes map growth safe.
///
/// lmdb.h, `mdb_env_set_mapsize`: it "may be called at later times if no transactions are active in this
/// process. Note that the library does not check for this condition, the caller must ensure it explicitly."
/// Every transaction (read or write) holds the gate shared while it runs; resizing takes it exclusively.
/// Anything that reads the map outside a transaction (`mdb_env_info`, `mdb_env_stat`) also holds it
/// shared, because a resize unmaps and remaps the file.
///
/// Only a thread's outermost transaction takes the read lock (see `ThreadState`), so the lock is never
/// taken recursively and can prefer writers: a pending resize is not starved by overlapping readers.
/// A thread must never wait for the exclusive side while it holds the shared side; growth from inside
/// another transaction of the same thread is refused instead (`Environment.write`).
final class TransactionGate: Sendable {
    // SAFETY: the lock is heap-allocated once, never moved, and only touched through pthread_rwlock_*,
    // which are thread-safe by definition. `let` makes the pointer itself immutable.
    nonisolated(unsafe) private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        var attributes = pthread_rwlockattr_t()
        pthread_rwlockattr_init(&attributes)
        #if canImport(Glibc)
        // glibc's default prefers readers, which lets overlapping readers starve a resize. Preferring
        // writers is safe here because the lock is never taken recursively (only a thread's outermost
        // transaction takes it).
        pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
        #endif
        let rc = pthread_rwlock_init(lock, &attributes)
        pthread_rwlockattr_destroy(&attributes)
        precondition(rc == 0, "TokenCacheLMDB: pthread_rwlock_init failed (\(rc))")
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    func lockShared() {
        let rc = pthread_rwlock_rdlock(lock)
        precondition(rc == 0, "TokenCacheLMDB: pthread_rwlock_rdlock failed (\(rc))")
    }

    func lockExclusive() {
        let rc = pthread_rwlock_wrlock(lock)
        precondition(rc == 0, "TokenCacheLMDB: pthread_rwlock_wrlock failed (\(rc))")
    }

    func unlock() {
        let rc = pthread_rwlock_unlock(lock)
        precondition(rc == 0, "TokenCacheLMDB: pthread_rwlock_unlock failed (\(rc))")
    }
}
