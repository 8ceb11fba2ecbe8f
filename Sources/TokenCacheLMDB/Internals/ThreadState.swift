import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Per-OS-thread bookkeeping, per environment: how deep this thread is inside transactions that hold
/// the environment's gate shared, and whether it is inside a write transaction.
///
/// Why thread-specific storage and not a `@TaskLocal`: LMDB's writer mutex and the gate's read lock
/// belong to OS threads, and plain threads (GCD, `Thread`) have no task. Transaction bodies are
/// synchronous, so a body starts and ends on one thread and a pthread key sees the whole nesting.
final class ThreadState {
    struct Entry {
        /// Transactions of this environment currently open on this thread (reads and writes).
        /// Only the outermost one takes the gate's read lock.
        var gateDepth = 0
        /// Whether a write transaction of this environment is open on this thread.
        var inWrite = false
    }

    /// This thread's stripe in per-thread counters and pools (``StripedCounters``): threads created one after another
    /// get different stripes, so a few busy threads rarely share one.
    let stripe = nextStripe.add(1, ordering: .relaxed).oldValue

    /// The environments this thread is inside: rarely more than one, so a short array searched linearly, with no
    /// hashing on every transaction. Its storage is kept when it empties, so steady use allocates nothing.
    private var entries: [(serial: UInt64, entry: Entry)] = []

    /// The calling thread's state, created on first use and released when the thread exits.
    static var current: ThreadState {
        if let existing = pthread_getspecific(threadStateKey) {
            return Unmanaged<ThreadState>.fromOpaque(existing).takeUnretainedValue()
        }
        let state = ThreadState()
        let rc = pthread_setspecific(threadStateKey, Unmanaged.passRetained(state).toOpaque())
        precondition(rc == 0, "TokenCacheLMDB: pthread_setspecific failed (\(rc))")
        return state
    }

    /// Entries that return to the idle state are dropped, so the table holds only live nesting.
    subscript(environment serial: UInt64) -> Entry {
        get {
            for item in entries where item.serial == serial { return item.entry }
            return Entry()
        }
        set {
            let index = entries.firstIndex { $0.serial == serial }
            let live = newValue.gateDepth != 0 || newValue.inWrite
            switch (index, live) {
            case (let index?, true): entries[index].entry = newValue
            case (let index?, false): entries.remove(at: index)
            case (nil, true): entries.append((serial, newValue))
            case (nil, false): break
            }
        }
    }
}

private let nextStripe = Atomic<Int>(0)

private let threadStateKey: pthread_key_t = {
    var key = pthread_key_t()
    #if os(Linux)
    let rc = pthread_key_create(&key) { pointer in
        guard let pointer else { return }
        Unmanaged<ThreadState>.fromOpaque(pointer).release()
    }
    #else
    let rc = pthread_key_create(&key) { pointer in
        Unmanaged<ThreadState>.fromOpaque(pointer).release()
    }
    #endif
    precondition(rc == 0, "TokenCacheLMDB: pthread_key_create failed (\(rc))")
    return key
}()
