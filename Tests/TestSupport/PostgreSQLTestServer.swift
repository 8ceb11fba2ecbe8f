import Foundation
import Synchronization

/// The private PostgreSQL server a test run may have (`Scripts/with-postgresql` starts one, and `make test` runs the
/// tests under it): its URL, and names for the schemas tests make in its database, one per store.
public enum PostgreSQLTestServer {
    /// `TOKEN_CACHE_TEST_POSTGRESQL`: the URL of the test database; nil when no server was started for this run.
    public static var url: String? {
        guard let url = ProcessInfo.processInfo.environment["TOKEN_CACHE_TEST_POSTGRESQL"], !url.isEmpty else { return nil }
        return url
    }

    /// `TOKEN_CACHE_TEST_REQUIRE_POSTGRESQL=1`: the run must test the PostgreSQL backend, so a missing server is a
    /// failure, never a silent skip.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["TOKEN_CACHE_TEST_REQUIRE_POSTGRESQL"] == "1" }

    private static let counter = Atomic<Int>(0)

    /// A schema name no other store of this run has: `t_<hint>_<pid>_<n>`, lower-case, at most 63 bytes.
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
}
