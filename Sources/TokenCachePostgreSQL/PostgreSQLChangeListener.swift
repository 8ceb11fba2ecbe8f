import Metrics
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
        var started = false
        var stopped = false
        var connection: PostgresConnection? = nil
        var heartbeat: RepeatedTask? = nil
        /// The wait before the next attempt to connect: 0.1 s, doubling to 2 s while attempts fail.
        var pause: TimeAmount = .milliseconds(100)
    }

    private let state = Mutex(State())
    let channel: String
    let hostID: String
    let connections: PostgreSQLConnections
    private var observability: SharedStoreObservability { connections.observability }
    /// The loop the listener's connections, timers and notifications run on: a NIO event loop, never the
    /// cooperative pool, which callers of the synchronous API may hold blocked.
    private let eventLoop: any EventLoop
    static let heartbeat: TimeAmount = .seconds(1)

    init(schema: String, hostID: String, connections: PostgreSQLConnections) {
        channel = PostgreSQLSchema.channel(schema)
        self.hostID = hostID
        self.connections = connections
        eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    }

    /// The newest state this host knows of: the same number while nothing changed that the listener heard of (or
    /// could have heard of: see the type's comment on outages); a new one on every call until it first connects.
    /// Starts the listener on first use (only a caller that caches answers needs it).
    func commitID() -> Int {
        let start = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.stopped
        }
        if start { eventLoop.execute { self.attempt() } }
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

    /// Ends the listener (the store's last reference went away).
    func stop() {
        let (connection, heartbeat) = state.withLock { state -> (PostgresConnection?, RepeatedTask?) in
            state.stopped = true
            return (state.connection, state.heartbeat)
        }
        heartbeat?.cancel()
        connection?.closeQuietly()
    }

    /// One attempt to connect and listen; on the event loop.
    private func attempt() {
        guard !state.withLock({ $0.stopped }) else { return }
        connections.connectFuture(on: eventLoop).flatMap { connection -> EventLoopFuture<PostgresConnection> in
            let kept = self.state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.connection = connection
                return true
            }
            guard kept else {
                connection.closeQuietly()
                return self.eventLoop.makeFailedFuture(CancellationError())
            }
            connection.addListener(channel: self.channel) { _, notification in
                guard notification.payload != self.hostID else { return }
                self.state.withLock { $0.epoch += 1 }
                self.observability.notifications.increment()
            }
            // LISTEN, then wait for it to take effect: from then on every commit is heard of.
            return self.connections.runFuture(PostgresQuery(unsafeSQL: "LISTEN \(self.channel)"), on: connection, doing: "listening for changes")
                .map { _ in connection }
        }.whenComplete { result in
            switch result {
            case .success(let connection): self.listening(on: connection)
            case .failure: self.retryLater()
            }
        }
    }

    /// The listener is in place on `connection`: whatever committed before is covered by moving the epoch once; a
    /// heartbeat watches the connection, and its close starts the next attempt.
    private func listening(on connection: PostgresConnection) {
        let heartbeat = eventLoop.scheduleRepeatedAsyncTask(initialDelay: Self.heartbeat, delay: Self.heartbeat) { _ in
            self.connections.runFuture("SELECT 1", on: connection, doing: "checking the change listener's connection").map { _ in }
                .flatMapError { _ in
                    connection.closeQuietly()
                    return self.eventLoop.makeSucceededVoidFuture()
                }
        }
        state.withLock { state in
            state.epoch += 1
            state.listening = true
            state.connectedOnce = true
            state.heartbeat = heartbeat
            state.pause = .milliseconds(100)
        }
        observability.listening.record(1)
        observability.reconnects.increment()
        observability.log(.info, "shared store change listener connected", location: connections.address.location)
        connection.closeFuture.whenComplete { _ in
            // Cut off: the epoch stays (answers kept are served through the outage); the reconnect moves it.
            let stopped = self.state.withLock { state -> Bool in
                state.listening = false
                state.connection = nil
                state.heartbeat?.cancel()
                state.heartbeat = nil
                return state.stopped
            }
            self.observability.listening.record(0)
            if !stopped {
                self.observability.losses.increment()
                self.observability.log(
                    .warning, "shared store change listener lost its connection; answers kept are served until it is back",
                    location: self.connections.address.location
                )
            }
            self.retryLater()
        }
    }

    private func retryLater() {
        let pause = state.withLock { state -> TimeAmount? in
            guard !state.stopped else { return nil }
            defer { state.pause = min(state.pause * 2, .seconds(2)) }
            return state.pause
        }
        guard let pause else { return }
        eventLoop.scheduleTask(in: pause) { self.attempt() }
    }
}
