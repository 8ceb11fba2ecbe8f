import Synchronization

/// At most one running operation per key in this process: a caller that finds one running for its key awaits that
/// operation's result instead of starting its own.
///
/// This is what turns a hundred concurrent requests for an expired token into one call to the token endpoint. The
/// operation runs in a task of its own, so a caller that is cancelled does not cancel it for the others waiting on
/// it; the key is free again as soon as the operation ends, and the next caller starts a new one (a result is
/// never kept: what to return later is the store's business).
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
        return (try await task.value, role)
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
