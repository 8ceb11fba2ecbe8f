import Foundation
import NIOCore
import PostgresNIO
import Synchronization
import TokenCacheStorage

/// How a host learns that another host changed the shared store: the commit id its answers are checked against
/// (``PostgreSQLRecordBackend/lastCommitID``).
///
/// Every statement that changes the `records` table notifies the schema's channel from inside its transaction (a
/// trigger, FORMAT.md §2.2), so a notification is delivered if and only if the change commits, to every host
/// listening then. This host listens on a connection of its own that never holds a transaction open, and keeps an
/// epoch: a number that moves whenever the store may have changed under it. It moves
/// - on each notification from another host (a host's own commits move it when they return, and its notifications,
///   which carry its id, are skipped);
/// - whenever the listener (re)connects, after `LISTEN` took effect: what committed while it was away is then covered;
/// - on every call until the listener has connected once, so that nothing is cached before anyone can say whether
///   it changed.
///
/// While the listener is cut off (the server stopped, or this host cut off from it) the epoch stays where it was:
/// the answers a caller keeps (the client's L1: access tokens not near expiry) are still served, which is what keeps
/// a farm answering through an outage. The price, and the bound on staleness: such an answer may be one that another
/// host removed or replaced during the outage, until the listener is back (it retries every 0.1 to 2 s, each attempt
/// bounded by the store's deadline). While it is connected, an answer is stale at most by one notification's
/// delivery; a connection cut silently is found by a heartbeat every second, bounded by the deadline.
final class PostgreSQLChangeListener: Sendable {
    private struct State {
        var epoch = 0
        var listening = false
        /// Whether the listener has connected once: before, nothing may be cached.
        var connectedOnce = false
        var task: Task<Void, Never>? = nil
        var connection: PostgresConnection? = nil
        var stopped = false
    }

    private let state = Mutex(State())
    let channel: String
    let hostID: String
    let connections: PostgreSQLConnections
    static let heartbeat: Duration = .seconds(1)

    init(schema: String, hostID: String, connections: PostgreSQLConnections) {
        channel = PostgreSQLSchema.channel(schema)
        self.hostID = hostID
        self.connections = connections
    }

    /// The newest state this host knows of: the same number while nothing changed that the listener heard of (or
    /// could have heard of: see the type's comment on outages); a new one on every call until it first connects.
    /// Starts the listener on first use (only a caller that caches answers needs it).
    func commitID() -> Int {
        startIfNeeded()
        return snapshotID()
    }

    /// The id a read records before its first statement (``commitID()`` without starting the listener).
    func snapshotID() -> Int {
        state.withLock { state in
            if !state.connectedOnce { state.epoch += 1 }
            return state.epoch
        }
    }

    /// This host's write committed: what it cached before may no longer hold.
    func ownCommit() {
        state.withLock { $0.epoch += 1 }
    }

    /// Whether the listener is connected and listening (for tests and status).
    var isListening: Bool { state.withLock { $0.listening } }

    private func startIfNeeded() {
        state.withLock { state in
            guard state.task == nil, !state.stopped else { return }
            state.task = Task.detached { [self] in await self.run() }
        }
    }

    /// Ends the listener (the store's last reference went away).
    func stop() {
        let (task, connection) = state.withLock { state -> (Task<Void, Never>?, PostgresConnection?) in
            state.stopped = true
            return (state.task, state.connection)
        }
        task?.cancel()
        connection?.closeQuietly()
    }

    private struct ListenerLost: Error {}

    private func run() async {
        var pause = Duration.milliseconds(100)
        while !Task.isCancelled, !state.withLock({ $0.stopped }) {
            do {
                let connection = try await connections.connect()
                state.withLock { $0.connection = connection }
                defer { connection.closeQuietly() }
                try await connection.listen(on: channel) { notifications in
                    // LISTEN has taken effect: whatever committed before is covered by moving the epoch once.
                    state.withLock { state in
                        state.epoch += 1
                        state.listening = true
                        state.connectedOnce = true
                    }
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask { [self] in
                            for try await notification in notifications where notification.payload != hostID {
                                state.withLock { $0.epoch += 1 }
                            }
                            throw ListenerLost()
                        }
                        group.addTask { [self] in
                            while true {
                                try await Task.sleep(for: Self.heartbeat)
                                _ = try await connections.run("SELECT 1", on: connection, doing: "checking the change listener's connection")
                            }
                        }
                        defer { group.cancelAll() }
                        _ = try await group.next()
                    }
                }
            } catch {}
            // Cut off: the epoch stays (answers kept are served through the outage); the reconnect moves it.
            let wasListening = state.withLock { state -> Bool in
                defer {
                    state.listening = false
                    state.connection = nil
                }
                return state.listening
            }
            if wasListening { pause = .milliseconds(100) }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(2))
        }
        state.withLock { $0.listening = false }
    }
}
