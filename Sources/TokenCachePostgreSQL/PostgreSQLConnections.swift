import Metrics
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization
import TokenCacheStorage

/// The connections of one store to its server, kept open between transactions, and the one place where a wait on the
/// server is bounded.
///
/// postgres-nio has no per-query timeout, so every wait here is bounded by the store's deadline: when it passes, the
/// connection is closed (which fails what waits on it) and the caller gets `.storeUnavailable` naming the server and
/// the deadline; the server ends the statement too (`statement_timeout`), and a transaction left idle
/// (`idle_in_transaction_session_timeout`). A connection that met any failure is closed, never reused.
///
/// Two pools, because the isolation a connection starts its transactions in is fixed at connect time
/// (`default_transaction_isolation`): readers run one statement or a `REPEATABLE READ` transaction; writers run
/// `SERIALIZABLE`, so that a write plan applied by one statement is checked and made under the server's
/// serialisable isolation (its plain `BEGIN` and `COMMIT` around it: a serialisable transaction may fail at commit).
/// Readers also keep their statements' generic plans (`plan_cache_mode`, see the initializer).
final class PostgreSQLConnections: Sendable {
    enum Role: Sendable { case reading, writing }

    let address: PostgreSQLAddress
    let role: Role
    /// How long a connection, a statement or a transaction may take.
    let timeout: Duration
    let observability: SharedStoreObservability
    private let configuration: PostgresConnection.Configuration
    /// The configuration of a change listener's connection: the same, under the listener's `application_name`.
    private let listenerConfiguration: PostgresConnection.Configuration
    private let idle = Mutex<[PostgresConnection]>([])
    private let keptIdle: Int
    private let nextID = Atomic<Int>(1)
    /// The statements prepared on each open connection of the pool, by connection id and text: a statement is parsed
    /// once per connection, then only bound and executed. A connection's entry goes when it closes.
    private let prepared = Mutex<[PostgresConnection.ID: [String: PreparedQuery]]>([:])
    static let logger = Logger(label: "token-cache.postgresql", factory: { _ in SwiftLogNoOpLogHandler() })

    /// - Parameter hostID: Who this host is, to the server: the change notifications of its writes carry it
    ///   (``PostgreSQLChangeListener``), so that it skips its own.
    init(
        address: PostgreSQLAddress, password: String?, role: Role, timeout: Duration, keptIdle: Int, hostID: String,
        observability: SharedStoreObservability
    ) throws(StorageError) {
        self.address = address
        self.observability = observability
        self.role = role
        self.timeout = timeout
        self.keptIdle = keptIdle
        var configuration: PostgresConnection.Configuration
        if let socket = address.socketPath {
            configuration = .init(unixSocketPath: socket, username: address.user, password: password, database: address.database)
        } else {
            configuration = .init(
                host: address.host ?? "localhost", port: address.port, username: address.user, password: password, database: address.database,
                tls: try Self.tls(for: address)
            )
        }
        let milliseconds = Int(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        // The connect's own bound: the TCP handshake; the deadline bounds the whole of it (authentication too).
        configuration.options.connectTimeout = .seconds(Int64(address.connectTimeout ?? max(1, milliseconds / 1000)))
        var parameters = [
            ("application_name", address.applicationName),
            ("statement_timeout", String(milliseconds)),
            ("idle_in_transaction_session_timeout", String(max(milliseconds * 2, 1000))),
            ("lock_timeout", String(milliseconds)),
            (PostgreSQLSchema.hostSetting, hostID),
            // The server compiles a statement whose estimated cost passes `jit_above_cost` on every execution. A
            // lookup's fetch estimates its never-run counts over the whole table, so past a few hundred thousand
            // records it crossed that line and spent 10-25 ms compiling a statement that runs in tens of microseconds.
            // No statement of the store scans enough rows for compiled expressions to pay.
            ("jit", "off"),
        ]
        switch role {
        case .writing: parameters.append(("default_transaction_isolation", "serializable"))
        case .reading:
            // A reader's statements are planned once per connection and kept (the generic plan), not planned again
            // for each execution's values, which cost a lookup as much server time as running it. Every statement a
            // reader sends bounds its key range by an index condition (a lookup's fetch runs one index scan per range
            // whatever the values, ``PostgreSQLPlanQueries/fetchStatement(table:versions:)``), so the generic plan is
            // the index plan a custom one would be. Writers keep the default: their plan function's statements are planned by
            // PL/pgSQL's own cache.
            parameters.append(("plan_cache_mode", "force_generic_plan"))
        }
        configuration.options.additionalStartupParameters = parameters
        self.configuration = configuration
        var listener = configuration
        listener.options.additionalStartupParameters = parameters.map { name, value in
            (name, name == "application_name" ? PostgreSQLSchema.listenerApplicationName(address.schema) : value)
        }
        listenerConfiguration = listener
    }

    /// The TLS a TCP connection uses, from `sslmode`: verified against the system's roots (or `sslrootcert`), the host
    /// name too for `verify-full`; encrypted without verification for `require`; none for `disable`.
    static func tls(for address: PostgreSQLAddress) throws(StorageError) -> PostgresConnection.Configuration.TLS {
        guard address.tls != .disable else { return .disable }
        var tls = TLSConfiguration.makeClientConfiguration()
        switch address.tls {
        case .verifyFull: tls.certificateVerification = .fullVerification
        case .verifyCA: tls.certificateVerification = .noHostnameVerification
        default: tls.certificateVerification = .none
        }
        if let root = address.rootCertificate { tls.trustRoots = .file(root) }
        let context: NIOSSLContext
        do { context = try NIOSSLContext(configuration: tls) } catch {
            throw StorageError(.invalidArgument, "TLS for \(address.location) cannot be set up: \(error)")
        }
        return address.tls.requiresTLS ? .require(context) : .prefer(context)
    }

    /// A connection for one transaction or statement, back to the pool after `body` unless it failed.
    func withConnection<R>(_ body: (PostgresConnection) throws -> R) throws -> R {
        let connection = try take().waitBounded(self, connection: nil, doing: "connecting")
        do {
            let result = try body(connection)
            giveBack(connection)
            return result
        } catch {
            connection.closeQuietly()
            throw error
        }
    }

    /// As ``withConnection(_:)``, waiting without blocking a thread.
    func withConnection<R: Sendable>(_ body: (PostgresConnection) async throws -> R) async throws -> R {
        let connection = try await take().getBounded(self, connection: nil, doing: "connecting")
        do {
            let result = try await body(connection)
            giveBack(connection)
            return result
        } catch {
            connection.closeQuietly()
            throw error
        }
    }

    /// A new connection, not one of the pool's, on `eventLoop`: for a listener that keeps it open, under the listener's
    /// `application_name`. Bounded by the deadline, without blocking or awaiting: the listener runs on its event loop
    /// alone.
    func connectFuture(on eventLoop: any EventLoop) -> EventLoopFuture<PostgresConnection> {
        PostgresConnection.connect(on: eventLoop, configuration: listenerConfiguration, id: nextID.add(1, ordering: .relaxed).newValue, logger: Self.logger)
            .bounded(self, connection: nil).0
    }

    /// `query` on `connection`, bounded by the deadline, as a future (the listener's heartbeat and `LISTEN`).
    func runFuture(_ query: PostgresQuery, on connection: PostgresConnection, doing what: String) -> EventLoopFuture<PostgresQueryResult> {
        connection.query(query, logger: Self.logger).bounded(self, connection: connection).0
    }

    private func take() -> EventLoopFuture<PostgresConnection> {
        while let connection = idle.withLock({ $0.popLast() }) {
            if !connection.isClosed { return connection.eventLoop.makeSucceededFuture(connection) }
        }
        return PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: nextID.add(1, ordering: .relaxed).newValue,
            logger: Self.logger
        )
    }

    private func giveBack(_ connection: PostgresConnection) {
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < keptIdle, !connection.isClosed else { return false }
            idle.append(connection)
            return true
        }
        if !kept { connection.closeQuietly() }
    }

    /// Closes every idle connection (a store's last reference going away).
    func closeAll() {
        for connection in idle.withLock({ idle in defer { idle.removeAll() }; return idle }) { connection.closeQuietly() }
    }

    /// Runs `query` on `connection`, bounded by the deadline.
    func run(_ query: PostgresQuery, on connection: PostgresConnection, doing what: String) throws -> PostgresQueryResult {
        try connection.query(query, logger: Self.logger).waitBounded(self, connection: connection, doing: what)
    }

    /// As ``run(_:on:doing:)``, waiting without blocking a thread.
    func run(_ query: PostgresQuery, on connection: PostgresConnection, doing what: String) async throws -> PostgresQueryResult {
        try await connection.query(query, logger: Self.logger).getBounded(self, connection: connection, doing: what)
    }

    /// `sql` with `values` on `connection`, prepared there on first use (``prepared``), bounded by the deadline.
    func runPrepared(_ sql: String, _ values: [PostgresData], on connection: PostgresConnection, doing what: String) throws -> [PostgresRow] {
        try executing(sql, values, on: connection).waitBounded(self, connection: connection, doing: what)
    }

    /// As ``runPrepared(_:_:on:doing:)``, waiting without blocking a thread.
    func runPrepared(_ sql: String, _ values: [PostgresData], on connection: PostgresConnection, doing what: String) async throws -> [PostgresRow] {
        try await executing(sql, values, on: connection).getBounded(self, connection: connection, doing: what)
    }

    private func executing(_ sql: String, _ values: [PostgresData], on connection: PostgresConnection) -> EventLoopFuture<[PostgresRow]> {
        let statement: EventLoopFuture<PreparedQuery>
        if let known = prepared.withLock({ $0[connection.id]?[sql] }) {
            statement = connection.eventLoop.makeSucceededFuture(known)
        } else {
            statement = connection.prepare(query: sql).map { query in
                let firstOfConnection = self.prepared.withLock { prepared -> Bool in
                    defer { prepared[connection.id, default: [:]][sql] = query }
                    return prepared[connection.id] == nil
                }
                if firstOfConnection {
                    connection.closeFuture.whenComplete { _ in self.prepared.withLock { $0[connection.id] = nil } }
                }
                return query
            }
        }
        return statement.flatMap { $0.execute(values) }
    }

    /// What a failure of the server or the connection means to the store.
    func storageError(_ error: any Error, doing what: String, timedOut: Bool) -> any Error {
        let mapped = mappedError(error, doing: what, timedOut: timedOut)
        if let failure = mapped as? StorageError, failure.code == .storeUnavailable {
            observability.unavailable.increment()
            observability.log(.warning, "shared store unavailable while \(what)", location: address.location)
        }
        return mapped
    }

    private func mappedError(_ error: any Error, doing what: String, timedOut: Bool) -> any Error {
        if error is StorageError { return error }
        let place = address.location
        if timedOut {
            return StorageError(.storeUnavailable, "the PostgreSQL server at \(place) gave no answer within \(timeout) while \(what); nothing more was sent")
        }
        if let error = error as? PSQLError {
            if error.code == .server, let state = error.serverInfo?[.sqlState] {
                let message = error.serverInfo?[.message] ?? "an error"
                return PostgreSQLFailure.map(sqlState: state, message: message, at: place, doing: what)
            }
            if let refusal = tlsRefusal(error.underlying) {
                return StorageError(.storeUnavailable, "TLS with the PostgreSQL server at \(place) failed while \(what): \(refusal); nothing was sent")
            }
            switch error.code {
            case .connectionError, .serverClosedConnection, .clientClosedConnection, .uncleanShutdown, .sslUnsupported, .failedToAddSSLHandler:
                let cause = error.underlying.map { " (\($0))" } ?? ""
                return StorageError(.storeUnavailable, "the PostgreSQL server at \(place) cannot be reached while \(what): \(error.code)\(cause)")
            case .authMechanismRequiresPassword:
                return StorageError(
                    .storeUnavailable, "the PostgreSQL server at \(place) asks for a password for user \(address.user); give one in a password file (passfile=…, PGPASSFILE or ~/.pgpass)"
                )
            default:
                return StorageError(.ioFailure, "the PostgreSQL server at \(place) failed while \(what): \(error.code)")
            }
        }
        return StorageError(.storeUnavailable, "the PostgreSQL server at \(place) cannot be reached while \(what): \(error)")
    }
}

/// Why TLS refused the server, in words, when `error` (a connection's underlying failure) is TLS's: the certificate
/// not signed by a trusted root, or not naming the host connected to. The details are BoringSSL's, which name no secret.
private func tlsRefusal(_ error: (any Error)?) -> String? {
    switch error {
    case let extra as NIOSSLExtraError where extra == .failedToValidateHostname:
        return "the server's certificate does not name the host connected to (sslmode=verify-full checks the name: connect by a "
            + "name the certificate holds)"
    case let ssl as NIOSSLError:
        if case .handshakeFailed(let boring) = ssl, "\(boring)".contains("CERTIFICATE_VERIFY_FAILED") {
            return "the server's certificate is not signed by a trusted root (sslrootcert, or the system's roots): \(boring)"
        }
        return "the TLS handshake failed: \(ssl)"
    case let extra as NIOSSLExtraError:
        return "the TLS handshake failed: \(extra)"
    default:
        return nil
    }
}

/// Set when a wait's deadline passed, so that the failure reads as a timeout, not a lost connection.
private final class DeadlineFlag: Sendable {
    let fired = Atomic<Bool>(false)
}

extension Duration {
    var timeAmount: TimeAmount { .nanoseconds(components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000) }
}

extension EventLoopFuture where Value: Sendable {
    /// This future raced against the deadline of `connections`: when the deadline comes first, the result fails, the
    /// connection the wait was on is closed (the server then ends its statement), and a connection this future still
    /// makes is closed when it arrives.
    fileprivate func bounded(_ connections: PostgreSQLConnections, connection: PostgresConnection?) -> (EventLoopFuture<Value>, DeadlineFlag) {
        let flag = DeadlineFlag()
        let promise = eventLoop.makePromise(of: Value.self)
        let deadline = eventLoop.scheduleTask(in: connections.timeout.timeAmount) {
            flag.fired.store(true, ordering: .relaxed)
            promise.fail(CancellationError())
            if let connection { connection.closeQuietly() }
        }
        whenComplete { result in
            deadline.cancel()
            if flag.fired.load(ordering: .relaxed), case .success(let value) = result, let late = value as? PostgresConnection { late.closeQuietly() }
            promise.completeWith(result)
        }
        return (promise.futureResult, flag)
    }

    /// The value, blocking this thread at most until the deadline.
    fileprivate func waitBounded(_ connections: PostgreSQLConnections, connection: PostgresConnection?, doing what: String) throws -> Value {
        let (future, flag) = bounded(connections, connection: connection)
        do { return try future.wait() } catch {
            throw connections.storageError(error, doing: what, timedOut: flag.fired.load(ordering: .relaxed))
        }
    }

    /// The value, waiting at most until the deadline without blocking a thread.
    fileprivate func getBounded(_ connections: PostgreSQLConnections, connection: PostgresConnection?, doing what: String) async throws -> Value {
        let (future, flag) = bounded(connections, connection: connection)
        do { return try await future.get() } catch {
            throw connections.storageError(error, doing: what, timedOut: flag.fired.load(ordering: .relaxed))
        }
    }
}

extension PostgresConnection {
    /// Closes the connection without waiting: what it was doing fails, and the server ends its transaction.
    /// The closure keeps the connection alive until it is closed (postgres-nio checks that none is dropped open).
    func closeQuietly() {
        let closing: EventLoopFuture<Void> = close()
        closing.whenComplete { _ in withExtendedLifetime(self) {} }
    }
}
