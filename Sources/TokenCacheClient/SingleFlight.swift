import Synchronization

/// At most one running operation per key in this process: a caller that finds one running for its key awaits that
/// operation's result instead of starting its own.
///
/// This is what turns a hundred concurrent requests for an expired token into one call to the token endpoint. The
/// operation runs in a task of its own, so a caller that is cancelled does not cancel it for the others waiting on
/// it: the cancelled caller stops waiting at once (it gets `CancellationError`), the operation goes on. The key is
/// free again as soon as the operation ends, and the next caller starts a new one (a result is never kept: what to
/// return later is the store's business).
final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Flight {
        let id: UInt64
        let task: Task<Value, any Error>
    }

    private struct State {
        var running: [Key: Flight] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Whether this caller started the operation (`led`) or joined one already running.
    enum Role: Sendable { case led, joined }

    /// `operation`'s result: from this call's own run, or from the run already going on for `key`.
    func run(_ key: Key, _ operation: @escaping @Sendable () async throws -> Value) async throws -> (value: Value, role: Role) {
        let (task, role) = flight(key, operation)
        return (try await Self.value(of: task), role)
    }

    /// The task's value, or `CancellationError` as soon as the calling task is cancelled (awaiting `task.value`
    /// alone would wait for the task whatever happens to the caller).
    private static func value(of task: Task<Value, any Error>) async throws -> Value {
        let waiter = Waiter()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                waiter.continuation.withLock { $0 = continuation }
                // Cancelled before the continuation was there for the handler to resume: resume it here.
                if Task.isCancelled { waiter.resume(with: .failure(CancellationError())) }
                Task { waiter.resume(with: await task.result) }
            }
        } onCancel: {
            waiter.resume(with: .failure(CancellationError()))
        }
    }

    /// One caller's continuation, resumed once: by the flight's end or by the caller's cancellation, whichever is
    /// first.
    private final class Waiter: Sendable {
        let continuation = Mutex<CheckedContinuation<Value, any Error>?>(nil)

        func resume(with result: Result<Value, any Error>) {
            continuation.withLock { continuation in
                defer { continuation = nil }
                return continuation
            }?.resume(with: result)
        }
    }

    /// Starts `operation` for `key` unless one is running, and returns without waiting for it. Whether it started
    /// one.
    @discardableResult
    func startIfIdle(_ key: Key, _ operation: @escaping @Sendable () async throws -> Value) -> Bool {
        flight(key, operation).role == .led
    }

    private func flight(_ key: Key, _ operation: @escaping @Sendable () async throws -> Value) -> (task: Task<Value, any Error>, role: Role) {
        state.withLock { state in
            if let flight = state.running[key] { return (flight.task, .joined) }
            state.nextID += 1
            let id = state.nextID
            // The task cannot end before it is registered: its last step takes this lock, which is held here.
            let task = Task {
                defer { self.finish(key, id: id) }
                return try await operation()
            }
            state.running[key] = Flight(id: id, task: task)
            return (task, .led)
        }
    }

    /// Returns once no operation is running (for tests, and for an app that wants background work done before it
    /// exits).
    func waitUntilIdle() async {
        while true {
            let tasks = state.withLock { $0.running.values.map(\.task) }
            if tasks.isEmpty { return }
            for task in tasks { _ = try? await task.value }
        }
    }

    private func finish(_ key: Key, id: UInt64) {
        state.withLock { state in
            if state.running[key]?.id == id { state.running[key] = nil }
        }
    }
}
