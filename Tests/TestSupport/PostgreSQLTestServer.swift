import Foundation
import Synchronization

/// The private PostgreSQL server a test run may have (`Scripts/with-postgresql` starts one, and `make test` runs the
/// tests under it): its URL, and names for the schemas tests make in its database, one per store. The script starts a
/// temporary cluster of its own (a Unix socket in a temporary directory, no TCP) and removes it afterwards, so no test
/// ever reaches a system service or a developer's own database.
///
/// A plain `swift test` has no server: then ``url`` is nil and the PostgreSQL suites skip, unless ``isRequired`` says
/// that they must run (the script sets it, so that under `make test` a missing server fails instead of skipping).
public enum PostgreSQLTestServer {
    /// `TOKEN_CACHE_TEST_POSTGRESQL`: the URL of the test database; nil when no server was started for this run. Its
    /// form is `postgresql://tokencache@/tokencache_test?host=<socket directory>&port=<port>`; the login role owns the
    /// database (so a test can make its own schemas) and is no superuser.
    public static var url: String? { variable("TOKEN_CACHE_TEST_POSTGRESQL") }

    /// `TOKEN_CACHE_TEST_REQUIRE_POSTGRESQL=1`: the run must test the PostgreSQL backend, so a missing server is a
    /// failure, never a silent skip.
    public static var isRequired: Bool { variable("TOKEN_CACHE_TEST_REQUIRE_POSTGRESQL") == "1" }

    /// `TOKEN_CACHE_TEST_POSTGRESQL_BIN`: the server's bin directory (`pg_ctl`, `psql`), for tests that stop, kill or
    /// restart the server to check what survives.
    public static var binDirectory: String? { variable("TOKEN_CACHE_TEST_POSTGRESQL_BIN") }

    /// `TOKEN_CACHE_TEST_POSTGRESQL_DATA`: the cluster's data directory (`pg_ctl -D`). Its `postgresql.conf` holds every
    /// setting the script chose, so a `pg_ctl start` after a stop brings back the same server.
    public static var dataDirectory: String? { variable("TOKEN_CACHE_TEST_POSTGRESQL_DATA") }

    /// `TOKEN_CACHE_TEST_POSTGRESQL_LOG`: the server's log file. Pass it to `pg_ctl start -l` on a restart: a server
    /// started without `-l` keeps the starting process's standard output and error open (a test reading them would
    /// wait for ever), and its messages would not reach the log.
    public static var logFile: String? { variable("TOKEN_CACHE_TEST_POSTGRESQL_LOG") }

    /// `TOKEN_CACHE_TEST_POSTGRESQL_USER`: the operating-system user the server runs as, which `pg_ctl` must run as too.
    /// Under root it is a dedicated system user (PostgreSQL refuses to run as root), otherwise the user running the
    /// tests.
    public static var serverUser: String? { variable("TOKEN_CACHE_TEST_POSTGRESQL_USER") }

    /// The deadline tests give a shared store where the deadline is not what they test: a connection to the server
    /// (a new backend process, authentication) can take seconds on a loaded 2-core machine, and a test that meets
    /// the store's 2 s default there fails for a reason it does not check. A full run of the suites on such a machine
    /// (hundreds of tests, kill storms and fsyncs beside the server) once kept a write's answer past 15 s.
    public static let timeout: Duration = .seconds(30)

    private static let counter = Atomic<Int>(0)

    /// A schema name no other store of this run has: `t_<hint>_<pid>_<n>`, lower-case, at most 63 bytes. Tests run in
    /// parallel and in several processes against one database, so each store gets a schema of its own; the process id
    /// and this process's count of calls make the name unique. Only lower-case ASCII letters, digits and underscores
    /// (the hint keeps no other character, and at most 30), so that the name needs no quoting (PostgreSQL folds
    /// unquoted identifiers to lower case) and stays within 63 bytes (PostgreSQL silently truncates longer
    /// identifiers, and two truncated names could be the same).
    public static func uniqueSchemaName(_ hint: String = "store") -> String {
        let cleaned = String(hint.lowercased().unicodeScalars.filter { ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") || $0 == "_" }.prefix(30))
        return "t_\(cleaned)_\(getpid())_\(counter.add(1, ordering: .relaxed).newValue)"
    }

    /// The test database's URL with `schema` set to a new unique schema.
    public static func uniqueStoreURL(_ hint: String = "store") -> String? {
        guard let url else { return nil }
        return url + (url.contains("?") ? "&" : "?") + "schema=" + uniqueSchemaName(hint)
    }

    /// The path of the server's Unix socket (`host` and `port` of the URL), nil without a server.
    public static func socketPath() throws -> String? {
        guard let url, let components = URLComponents(string: url) else { return nil }
        let items = components.queryItems ?? []
        guard let directory = items.first(where: { $0.name == "host" })?.value else { return nil }
        let port = items.first(where: { $0.name == "port" })?.value ?? "5432"
        return "\(directory)/.s.PGSQL.\(port)"
    }

    /// `url` with its socket directory replaced by `directory` (and port 5432): the same database through a proxy.
    public static func url(_ url: String, throughSocketDirectory directory: String) throws -> String {
        guard var components = URLComponents(string: url) else { throw URLError(.badURL) }
        components.queryItems = (components.queryItems ?? []).map { item in
            switch item.name {
            case "host": URLQueryItem(name: "host", value: directory)
            case "port": URLQueryItem(name: "port", value: "5432")
            default: item
            }
        }
        guard let text = components.string else { throw URLError(.badURL) }
        return text
    }

    /// The variable's value; nil when it is unset or empty.
    private static func variable(_ name: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return value
    }
}
