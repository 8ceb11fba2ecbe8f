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
}
