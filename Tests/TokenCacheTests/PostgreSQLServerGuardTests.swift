import TestSupport
import Testing

/// The shared store's suites run only when the run has a PostgreSQL server. `make test` always starts one and says
/// so (`TOKEN_CACHE_TEST_REQUIRE_POSTGRESQL=1`): then a missing server fails here instead of skipping those suites.
@Suite struct PostgreSQLServerGuardTests {
    @Test func postgreSQLServerIsConfiguredWhenRequired() throws {
        guard PostgreSQLTestServer.isRequired else { return }
        try #require(
            PostgreSQLTestServer.url != nil,
            "TOKEN_CACHE_TEST_REQUIRE_POSTGRESQL=1 but TOKEN_CACHE_TEST_POSTGRESQL is not set: run the tests through Scripts/with-postgresql"
        )
        // What the tests that stop and restart the server need besides.
        #expect(PostgreSQLTestServer.binDirectory != nil)
        #expect(PostgreSQLTestServer.dataDirectory != nil)
        #expect(PostgreSQLTestServer.logFile != nil)
        #expect(PostgreSQLTestServer.serverUser != nil)
    }
}

/// The schema names tests make their stores in: distinct, and identifiers PostgreSQL takes as they are.
@Suite struct PostgreSQLSchemaNameTests {
    @Test func uniqueSchemaNamesAreDistinctUnquotedIdentifiers() {
        let hints = ["store", "Silent Lookup: ünïcode/✓", "", String(repeating: "long_hint", count: 20)]
        let names = hints.flatMap { hint in (0..<3).map { _ in PostgreSQLTestServer.uniqueSchemaName(hint) } }
        #expect(Set(names).count == names.count)
        for name in names {
            // At most 63 bytes (PostgreSQL truncates longer ones); a lower-case letter first, then lower-case letters,
            // digits and underscores, so that no quoting is needed.
            #expect(name.utf8.count <= 63, "\(name)")
            #expect(name.hasPrefix("t_"), "\(name)")
            #expect(name.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }, "\(name)")
        }
        #expect(PostgreSQLTestServer.uniqueSchemaName("Tokens").hasPrefix("t_tokens_"))
    }
}
