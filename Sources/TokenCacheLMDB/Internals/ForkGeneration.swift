import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A process-wide counter that the child of every `fork()` increments (a `pthread_atfork` child handler), so that
/// "is this environment used after a fork?" is one relaxed atomic load per transaction instead of a `getpid()`
/// system call (glibc no longer caches the pid; the call cost about 0.2 µs of a 10 µs lookup).
///
/// The handler is registered the first time the generation is read, which `Environment` does when it opens, so
/// every fork after any environment exists is counted. A child created without running `atfork` handlers
/// (`vfork`/`posix_spawn`, which exec at once, or a raw `clone`) is not counted; the rare paths that must never
/// touch a parent's environment (close, reader-table checks) still compare the pid instead.
enum ForkGeneration {
    private static let counter = Atomic<Int>(0)

    private static let registered: Bool = {
        pthread_atfork(nil, nil, { ForkGeneration.counter.add(1, ordering: .relaxed) }) == 0
    }()

    /// The number of forks between the first read and now, as seen by this process.
    static var current: Int {
        _ = registered
        return counter.load(ordering: .relaxed)
    }
}
