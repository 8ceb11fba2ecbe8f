import Synchronization

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
/// The shared side is taken on every transaction, by every thread, so it must not be one word that all threads
/// write: a `pthread_rwlock_t` is, and two threads reading at once spend their time moving its cache line between
/// cores. Readers therefore count themselves in per-thread stripes (``StripedCounters``), and the exclusive side
/// waits for every stripe to drain:
///
/// - shared: increment the thread's stripe, then check `exclusiveWanted`; if it is set, undo the increment, wait
///   for the exclusive holder on `exclusive` (a mutex the holder keeps for its whole turn), and retry;
/// - exclusive: take `exclusive` (one exclusive holder at a time), set `exclusiveWanted`, then wait until every
///   stripe reads zero.
///
/// Both sides use sequentially consistent operations: a reader's increment and an exclusive holder's flag are
/// ordered, so either the reader sees the flag and backs off or the holder sees the reader's count and waits. A
/// pending exclusive holder is not starved: once the flag is set, no new reader enters.
///
/// Only a thread's outermost transaction takes the shared side (see `ThreadState`), so it is never taken
/// recursively. A thread must never wait for the exclusive side while it holds the shared side; growth from inside
/// another transaction of the same thread is refused instead (`Environment.write`).
final class TransactionGate: Sendable {
    private let readers = StripedCounters()
    private let exclusiveWanted = Atomic<Bool>(false)
    private let exclusive = Mutex<Void>(())

    func lockShared(stripe: Int) {
        let count = readers[stripe]
        while true {
            count.pointee.add(1, ordering: .sequentiallyConsistent)
            if !exclusiveWanted.load(ordering: .sequentiallyConsistent) { return }
            count.pointee.subtract(1, ordering: .sequentiallyConsistent)
            exclusive.withLock { _ in }  // returns once the exclusive holder is done
        }
    }

    func unlockShared(stripe: Int) {
        readers[stripe].pointee.subtract(1, ordering: .releasing)
    }

    /// Runs `body` once no thread holds the shared side, keeping new readers out until it returns.
    func withExclusive<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        try exclusive.withLock { _ throws(E) -> R in
            exclusiveWanted.store(true, ordering: .sequentiallyConsistent)
            defer { exclusiveWanted.store(false, ordering: .sequentiallyConsistent) }
            for stripe in 0..<StripedCounters.stripes {
                // Readers leave within microseconds; one inside a long read (an export) or a blocked write may take
                // long, so after a short spin the wait sleeps instead of burning a core.
                var waits = 0
                while readers[stripe].pointee.load(ordering: .sequentiallyConsistent) != 0 {
                    waits += 1
                    if waits < 64 { sched_yield() } else { usleep(waits < 1_000 ? 50 : 1_000) }
                }
            }
            return try body()
        }
    }
}
