import TestSupport
import Testing

/// The shared store's suites run only when the run has a PostgreSQL server. `make test` always starts one and says
/// so (`TOKEN_CACHE_TEST_REQUIRE_POSTGRESQL=1`): then a missing server fails here instead of skipping those suites.
@Suite struct PostgreSQLServerGuardTests {
    @Test func postgreSQLServerIsConfiguredWhenRequired() {
        #expect(
            !PostgreSQLTestServer.isRequired || PostgreSQLTestServer.url != nil,
            "TOKEN_CACHE_TEST_REQUIRE_POSTGRESQL=1 but TOKEN_CACHE_TEST_POSTGRESQL is not set: run the tests through Scripts/with-postgresql"
        )
    }
}
