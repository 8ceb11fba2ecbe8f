import Dispatch
import Foundation
import Synchronization

/// A thread of the client's own on which its writes run, one at a time, in the order they were submitted.
///
/// Every write commits durably (an `fsync`), which takes hundreds of microseconds to milliseconds, and LMDB lets
/// one writer in at a time across all processes, so a write may also wait for another process's. Run on Swift
/// concurrency's cooperative pool, which has as many threads as cores, a few concurrent writes would stall every
/// task of the app. Here they wait on a thread that does nothing else; the caller's task is suspended meanwhile
/// and its thread is free.
///
/// The thread ends when the last reference to this object goes, after running what was already submitted.
final class WriteThread: Sendable {
    private let queue = JobQueue()

    /// Starts the thread; `name` is what debuggers and `top -H` show.
    init(name: String) {
        let queue = self.queue
        let thread = Thread { queue.runUntilClosed() }
        thread.name = name
        // LMDB and the record layer need little stack; the platform default for a new thread is smaller than the
        // main thread's, so ask for the main thread's usual size.
        thread.stackSize = 8 << 20
        thread.start()
    }

    deinit { queue.close() }

    /// Runs `body` on the write thread and returns what it returns (or throws what it throws).
    ///
    /// Once submitted, `body` runs even if the calling task is cancelled meanwhile: a write that may already have
    /// begun is never abandoned halfway, and its caller learns its outcome.
    func run<R: Sendable>(_ body: @escaping @Sendable () throws -> R) async throws -> R {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<R, any Error>) in
            queue.submit { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Whether the calling code runs on a client's write thread (for tests and assertions).
    static var isCurrent: Bool { Thread.current.threadDictionary[JobQueue.marker] != nil }
}

/// The jobs waiting for the write thread, and the semaphore that wakes it.
private final class JobQueue: Sendable {
    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var closed = false
    }

    static let marker = "TokenClient.WriteThread"

    private let state = Mutex(State())
    private let wakeUp = DispatchSemaphore(value: 0)

    func submit(_ job: @escaping @Sendable () -> Void) {
        state.withLock { $0.jobs.append(job) }
        wakeUp.signal()
    }

    func close() {
        state.withLock { $0.closed = true }
        wakeUp.signal()
    }

    /// The thread's body: runs jobs as they come until closed and drained.
    func runUntilClosed() {
        Thread.current.threadDictionary[Self.marker] = true
        while true {
            wakeUp.wait()
            let (jobs, closed) = state.withLock { state in
                defer { state.jobs.removeAll(keepingCapacity: true) }
                return (state.jobs, state.closed)
            }
            for job in jobs { job() }
            if closed && state.withLock({ $0.jobs.isEmpty }) { return }
        }
    }
}
