import Metrics
import Foundation
import NIOCore
import PostgresNIO
import Synchronization
import TokenCacheStorage

/// How a host learns that another host changed the shared store: the commit id (``PostgreSQLRecordBackend/lastCommitID``)
/// and the bucket versions (``isCurrent(_:)``) its answers are checked against.
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
///
/// **Buckets.** The epoch moves on any change anywhere; an answer kept by the client depends on a few buckets only
/// (its account's, its application's, and the global one: FORMAT.md §2.2), and is judged by those
/// (``BucketStamp``). For each bucket a fetch depended on, this host tracks the highest version it knows of (from
/// notifications, which name each bucket a commit bumped and its new version, and from reading the `buckets` table
/// after a reconnection) and how many commits of its own touched it. A stamp holds while, for each of its buckets, no
/// version above the one its fetch read is known and no commit of this host's touched it since the fetch began; and
/// while the generation it was fetched in is current, or else its buckets were read again after the listener came
/// back (on every connection: `LISTEN` first, then read the versions of the buckets tracked, so that a change made
/// while it was away is either read or heard). A notification with too many buckets to name (`*`) moves the
/// generation: every answer is dropped.
final class PostgreSQLChangeListener: Sendable {
    /// What this host knows of one bucket that a fetch depended on.
    fileprivate struct Bucket {
        /// The highest version known to be committed.
        var latest: Int64 = 0
        /// Commits of this host's that touched it.
        var ownCommits = 0
        /// The generation in which a reconnection last read its version.
        var confirmed = -1

        /// `version` is committed: the highest known rises to it.
        mutating func learn(_ version: Int64) { latest = max(latest, version) }
    }

    private struct State {
        var epoch = 0
        /// Moves when the listener (re)connects, on `*`, and when the buckets tracked overflow (``BucketStamp``).
        var generation = 0
        var buckets: [[UInt8]: Bucket] = [:]
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
    /// The most buckets tracked at once; past it, every one is forgotten (and every answer dropped).
    static let trackedBuckets = 262_144

    /// The `buckets` table, as statements name it.
    let bucketsTable: String

    init(schema: String, hostID: String, connections: PostgreSQLConnections) {
        channel = PostgreSQLSchema.channel(schema)
        bucketsTable = PostgreSQLSchema.Names(schema: schema).buckets
        self.hostID = hostID
        self.connections = connections
        eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    }

    /// The newest state this host knows of: the same number while nothing changed that the listener heard of (or
    /// could have heard of: see the type's comment on outages); a new one on every call until it first connects.
    /// Starts the listener on first use (only a caller that caches answers needs it).
    func commitID() -> Int {
        startIfNeeded()
        return snapshotID()
    }

    /// Starts the listener unless it runs (or was stopped).
    private func startIfNeeded() {
        let start = state.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.stopped
        }
        if start { eventLoop.execute { self.attempt() } }
    }

    /// The id a read records before its first statement (``commitID()`` without starting the listener).
    func snapshotID() -> Int {
        state.withLock { state in
            if !state.connectedOnce { state.epoch += 1 }
            return state.epoch
        }
    }

    /// This host's write committed, touching `buckets` (nil: any): what it cached before may no longer hold.
    func ownCommit(touching buckets: Set<[UInt8]>?) {
        state.withLock { state in
            state.epoch += 1
            guard let buckets else {
                state.generation += 1
                return
            }
            for bucket in buckets { state.buckets[bucket]?.ownCommits += 1 }
        }
    }

    /// A fetch that depends on `buckets` begins: what a stamp records before the first statement.
    func beginStamp(_ buckets: [[UInt8]]) -> PendingStamp {
        state.withLock { state in
            if !state.connectedOnce { state.generation += 1 }
            if state.buckets.count + buckets.count > Self.trackedBuckets {
                state.buckets = [:]
                state.generation += 1
            }
            var known: [Bucket] = []
            known.reserveCapacity(buckets.count)
            for bucket in buckets {
                let entry = state.buckets[bucket, default: Bucket()]
                state.buckets[bucket] = entry
                known.append(entry)
            }
            return PendingStamp(generation: state.generation, buckets: buckets, known: known)
        }
    }

    /// What ``beginStamp(_:)`` recorded.
    struct PendingStamp {
        let generation: Int
        let buckets: [[UInt8]]
        fileprivate let known: [Bucket]
    }

    /// The stamp of a fetch begun as `pending` that read `versions` (one per bucket, 0 for a bucket never written).
    /// A version below one this host already knew to be committed means the server went back (a restored backup, a
    /// standby promoted behind its primary): counted and logged, and the stamp never holds.
    func stamp(_ pending: PendingStamp, versions: [Int64]) -> BucketStamp {
        var dependencies: [BucketStamp.Dependency] = []
        dependencies.reserveCapacity(pending.buckets.count)
        var regressed = false
        for (index, bucket) in pending.buckets.enumerated() {
            let version = index < versions.count ? versions[index] : 0
            if version < pending.known[index].latest { regressed = true }
            dependencies.append(BucketStamp.Dependency(bucket: bucket, version: version, ownCommits: pending.known[index].ownCommits))
        }
        if regressed {
            observability.bucketRegressions.increment()
            observability.log(
                .warning, "the shared store returned a bucket version below one this host already read: the server's data went back",
                location: connections.address.location
            )
        }
        return BucketStamp(generation: pending.generation, dependencies: dependencies)
    }

    /// Whether nothing `stamp` depends on is known to have changed (the type's comment). Starts the listener on first
    /// use, as ``commitID()`` does.
    func isCurrent(_ stamp: BucketStamp) -> Bool {
        startIfNeeded()
        return state.withLock { state in
            guard state.connectedOnce else { return false }
            let regenerated = stamp.generation != state.generation
            for dependency in stamp.dependencies {
                guard let bucket = state.buckets[dependency.bucket], bucket.ownCommits == dependency.ownCommits, bucket.latest <= dependency.version,
                    !regenerated || bucket.confirmed == state.generation
                else { return false }
            }
            return true
        }
    }

    /// Applies a notification: each bucket it names that this host tracks learns its version, `*` moves the
    /// generation, and another host's moves the epoch.
    private func heard(_ payload: String) {
        // The host's id comes first, empty for a writer that is no host (an operator's SQL).
        var words = payload.split(separator: " ", omittingEmptySubsequences: false).makeIterator()
        // This host's own commits move the epoch when they return (``ownCommit(touching:)``), not here; their bumps
        // are applied all the same, so that a commit whose acknowledgement was lost still voids what it changed.
        let own = words.next().map(String.init) == hostID
        var bumps: [([UInt8], Int64)] = []
        var everything = false
        while let word = words.next() {
            if word.isEmpty { continue }
            if word == "*" {
                everything = true
                break
            }
            guard let colon = word.firstIndex(of: ":"), let version = Int64(word[word.index(after: colon)...]),
                let bucket = Self.bytes(hex: word[..<colon])
            else {
                everything = true  // not understood: assume the worst
                break
            }
            bumps.append((bucket, version))
        }
        state.withLock { state in
            if !own { state.epoch += 1 }
            if everything { state.generation += 1 }
            for (bucket, version) in bumps { state.buckets[bucket]?.learn(version) }
        }
        if !own { observability.notifications.increment() }
    }

    /// The bytes of lowercase hex digits; nil when `hex` is not that.
    static func bytes(hex: Substring) -> [UInt8]? {
        guard hex.utf8.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8? = nil
        for character in hex.utf8 {
            let digit: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let first = high {
                bytes.append(first << 4 | digit)
                high = nil
            } else {
                high = digit
            }
        }
        return bytes
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
            connection.addListener(channel: self.channel) { _, notification in self.heard(notification.payload) }
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

    /// The listener is in place on `connection`: whatever committed before is covered by moving the epoch and the
    /// generation once, then reading the versions of the buckets tracked (``confirm(on:generation:buckets:)``); a
    /// heartbeat watches the connection, and its close starts the next attempt.
    private func listening(on connection: PostgresConnection) {
        let heartbeat = eventLoop.scheduleRepeatedAsyncTask(initialDelay: Self.heartbeat, delay: Self.heartbeat) { _ in
            let sent = NIODeadline.now()
            return self.connections.runFuture("SELECT 1", on: connection, doing: "checking the change listener's connection")
                .map { _ in self.observability.listenerLag.recordNanoseconds((NIODeadline.now() - sent).nanoseconds) }
                .flatMapError { _ in
                    connection.closeQuietly()
                    return self.eventLoop.makeSucceededVoidFuture()
                }
        }
        let (generation, tracked) = state.withLock { state in
            state.epoch += 1
            state.generation += 1
            state.listening = true
            state.connectedOnce = true
            state.heartbeat = heartbeat
            state.pause = .milliseconds(100)
            return (state.generation, Array(state.buckets.keys))
        }
        confirm(on: connection, generation: generation, buckets: tracked) {
            self.observability.listening.record(1)
            self.observability.reconnects.increment()
            self.observability.log(.info, "shared store change listener connected", location: self.connections.address.location)
        }
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

    /// Reads the versions of `buckets` (those tracked when the listener came back in `generation`), so that the
    /// answers depending on them hold again unless a bucket moved while the listener was away; then `caughtUp` (the
    /// listener is reported connected once it has). A failure closes the connection: the next one reads them again.
    private func confirm(on connection: PostgresConnection, generation: Int, buckets: [[UInt8]], caughtUp: @escaping @Sendable () -> Void) {
        guard !buckets.isEmpty else { return caughtUp() }
        var binds = PostgresBindings()
        binds.append(buckets.map { ByteBuffer(bytes: $0) })
        let query = PostgresQuery(unsafeSQL: "SELECT bucket, version FROM \(bucketsTable) WHERE bucket = ANY($1)", binds: binds)
        connections.runFuture(query, on: connection, doing: "reading the buckets' versions").whenComplete { result in
            guard case .success(let rows) = result else {
                connection.closeQuietly()
                return
            }
            var versions: [[UInt8]: Int64] = [:]
            for row in rows {
                guard let (bucket, version) = try? row.decode((ByteBuffer, Int64).self) else {
                    connection.closeQuietly()
                    return
                }
                versions[Array(bucket.readableBytesView)] = version
            }
            self.state.withLock { state in
                guard state.generation == generation else { return }
                for bucket in buckets {
                    state.buckets[bucket]?.learn(versions[bucket] ?? 0)
                    state.buckets[bucket]?.confirmed = generation
                }
            }
            caughtUp()
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
