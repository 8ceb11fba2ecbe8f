import Foundation
import PostgresNIO
import TestSupport
import Testing
import TokenCacheStorage

@testable import TokenCachePostgreSQL

/// The session settings a shared store's connections ask the server for, read back from the server itself: what
/// bounds every statement and idle transaction, the isolation writers rely on, the generic plans readers keep, and no
/// JIT compilation (past a few hundred thousand records the lookup's generic plan is estimated above
/// `jit_above_cost`, and the server would compile the statement at every execution).
@Suite(.enabled(if: PostgreSQLTestServer.url != nil, "needs the run's PostgreSQL server (make test starts one)"))
struct SharedStoreSessionSettingsTests {
    static let names = [
        "jit", "statement_timeout", "idle_in_transaction_session_timeout", "lock_timeout", "default_transaction_isolation", "plan_cache_mode",
        "application_name",
    ]

    /// The values of ``names`` on a connection of `pool`, as the server reports them.
    static func settings(of pool: PostgreSQLConnections) throws -> [String: String] {
        try pool.withConnection { connection in
            var settings: [String: String] = [:]
            for name in names {
                let rows = try pool.run(PostgresQuery(unsafeSQL: "SELECT current_setting('\(name)')"), on: connection, doing: "reading \(name)")
                for row in rows { settings[name] = try row.decode(String.self) }
            }
            return settings
        }
    }

    @Test func everyConnectionRunsWithTheSettingsTheStoreReliesOn() throws {
        let url = try #require(PostgreSQLTestServer.uniqueStoreURL("settings"))
        let address = try PostgreSQLAddress(parsing: url + "&application_name=settings-test", environment: ProcessInfo.processInfo.environment)
        // The tests' deadline (a connection can take seconds on a loaded machine), whose settings follow from it.
        #expect(PostgreSQLTestServer.timeout == .seconds(30))
        let backend = try PostgreSQLStorageLocation(address: address, timeout: PostgreSQLTestServer.timeout).backend(readOnly: false)
        let readers = try Self.settings(of: backend.readers), writers = try Self.settings(of: backend.writers)
        for settings in [readers, writers] {
            #expect(settings["jit"] == "off", "\(settings)")
            #expect(settings["statement_timeout"] == "30s", "\(settings)")
            #expect(settings["lock_timeout"] == "30s", "\(settings)")
            #expect(settings["idle_in_transaction_session_timeout"] == "1min", "\(settings)")
            #expect(settings["application_name"] == "settings-test", "\(settings)")
        }
        #expect(readers["plan_cache_mode"] == "force_generic_plan" && writers["plan_cache_mode"] == "auto", "\(readers) \(writers)")
        #expect(writers["default_transaction_isolation"] == "serializable" && readers["default_transaction_isolation"] == "read committed")
    }
}
