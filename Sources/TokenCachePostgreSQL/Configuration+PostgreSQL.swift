import Foundation
public import TokenCache
public import Logging
public import Metrics
import TokenCacheStorage

extension Configuration {
    /// `TOKEN_CACHE_STORE_TIMEOUT`: how long a shared store's connection, statement or transaction may take before
    /// it fails with `.storeUnavailable` (a duration as for `TOKEN_CACHE_LOCK_TIMEOUT`; 2 s by default).
    public static let storeTimeoutVariable = "TOKEN_CACHE_STORE_TIMEOUT"

    /// The default bound of every wait on a shared store's server.
    public static let defaultStoreTimeout: Duration = .seconds(2)

    /// Whether `location` names a shared store (a `postgresql://` or `postgres://` URL) rather than a directory.
    public static func isSharedStoreURL(_ location: String) -> Bool { PostgreSQLAddress.isURL(location) }

    /// A configuration for the shared store at `url`, a PostgreSQL connection URL in libpq's form:
    /// `postgresql://user@host:port/database?sslmode=verify-full`, or `postgresql://user@/database?host=/run/postgresql`
    /// for a Unix socket, with `schema=` naming the schema that holds the store (`token_cache` by default).
    ///
    /// Every host that serves the same users opens the same URL with the same root key (key file, `TOKEN_CACHE_KEY`
    /// or passphrase): the server keeps only sealed records under blind-index keys, as a directory would on disk.
    /// A server off this machine is reached over TLS that verifies it (`sslmode=verify-full` unless the URL says
    /// `verify-ca` or `require`; weaker modes are refused). Give a password in a password file (`passfile=`,
    /// `PGPASSFILE` or `~/.pgpass`) rather than in the URL, which other users' `ps` may read.
    ///
    /// - Parameters:
    ///   - timeout: The bound of every wait on the server: a connection, a statement, a transaction
    ///     (``defaultStoreTimeout``; `TOKEN_CACHE_STORE_TIMEOUT` where ``fromEnvironment(_:)`` reads it).
    ///   - connections: Connections kept open between transactions, per kind (readers, writers).
    ///   - logger: Where the store logs its connection to the server (the listener's losses and returns, the server
    ///     unavailable): nil logs nothing. Lines name the store's location, never a password or an identifier.
    ///   - metricsFactory: Where its metrics go (the listener's state, invalidations, conflicts, unavailability):
    ///     nil sends them wherever `MetricsSystem` was bootstrapped.
    /// - Throws: ``TokenCacheError`` `.invalidArgument` naming what is wrong with the URL (never its password).
    public static func sharedStore(
        _ url: String, keySource: KeySource, timeout: Duration = defaultStoreTimeout, connections: Int = 4, logger: Logger? = nil,
        metricsFactory: (any MetricsFactory)? = nil
    ) throws(TokenCacheError) -> Configuration {
        let address: PostgreSQLAddress
        do { address = try PostgreSQLAddress(parsing: url) } catch { throw TokenCacheError(.invalidArgument, error.message) }
        guard timeout > .zero, connections > 0 else {
            throw TokenCacheError(.invalidArgument, "a shared store needs a timeout above zero and at least one connection")
        }
        var configuration = Configuration(directory: address.location, keySource: keySource)
        configuration.storageLocation = PostgreSQLStorageLocation(
            address: address, timeout: timeout, keptConnections: connections, logger: logger, metricsFactory: metricsFactory
        )
        return configuration
    }

    /// ``fromEnvironment(_:)`` for `location`, a directory or a shared store's URL: where `cachetool` and an app
    /// that takes its store from `TOKEN_CACHE_DIR` or a command line turn one string into a store.
    public static func forLocation(_ location: String, environment: [String: String]) throws(TokenCacheError) -> Configuration {
        var configuration = fromEnvironment(environment)
        guard isSharedStoreURL(location) else {
            configuration.directory = location
            return configuration
        }
        let timeout = environment[storeTimeoutVariable].flatMap(lockTimeout(parsing:)) ?? defaultStoreTimeout
        var shared = try sharedStore(location, keySource: configuration.keySource, timeout: timeout)
        shared.readOnly = configuration.readOnly
        shared.maximumPassphraseCost = configuration.maximumPassphraseCost
        shared.lockTimeout = configuration.lockTimeout
        shared.cipher = configuration.cipher
        return shared
    }
}
