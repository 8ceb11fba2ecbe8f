import Foundation
import TestSupport
import Testing
import TokenCacheStorage

@testable import TokenCache

/// A write plan whose transaction fails at COMMIT, after `apply_plan` returned its result: the failure a serialisable
/// transaction may meet when a concurrent one commits first. The server is made to refuse the commit on purpose by a
/// deferred constraint trigger on the schema's records table, which raises a serialisation failure (SQLSTATE 40001)
/// when the transaction commits, for the first `failures` commits that write a record. Run in autocommit, the
/// statement's result would come back as applied and the write would be lost; run in a transaction of its own, the
/// failed COMMIT says so, and the write is decided again or given up with an error.
@Suite(.enabled(if: PostgreSQLTestServer.url != nil, "needs the run's PostgreSQL server (make test starts one)"))
struct SharedStoreCommitFailureTests {
    static let tenant = "https://login.microsoftonline.com/\(User.utid)"

    /// Makes the commits of the store's next `failures` transactions that write a record fail with a serialisation
    /// failure. The count is a sequence, which a rollback does not undo.
    static func failCommits(of store: TestStore, _ failures: Int64) throws {
        let schema = "\"\(try SharedStoreTests.schema(of: store))\""
        let sql = """
            CREATE SEQUENCE \(schema).commit_attempts;
            CREATE FUNCTION \(schema).refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $body$
            BEGIN
                IF nextval('\(schema).commit_attempts') <= \(failures) THEN
                    RAISE EXCEPTION 'commit refused by the test' USING ERRCODE = 'serialization_failure';
                END IF;
                RETURN NULL;
            END
            $body$;
            CREATE CONSTRAINT TRIGGER refuse_commit AFTER INSERT OR UPDATE OR DELETE ON \(schema).records
                DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION \(schema).refuse_commit();
            """
        _ = try SharedStoreTests.client("psql", ["--no-psqlrc", "--quiet", "--set", "ON_ERROR_STOP=1", "--command", sql])
    }

    /// How often the trigger ran: once per failed commit, then once per record written by commits that went through.
    static func commitAttempts(of store: TestStore) throws -> Int {
        let schema = "\"\(try SharedStoreTests.schema(of: store))\""
        let text = try SharedStoreTests.client(
            "psql", ["--no-psqlrc", "--quiet", "--tuples-only", "--no-align", "--command", "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM \(schema).commit_attempts"]
        )
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// The access tokens' secrets as another host reads them from the server (opened read-only: it writes nothing
    /// the trigger could refuse).
    static func accessTokenSecrets(_ store: TestStore) throws -> [String] {
        let other = try store.openReadOnly()
        return try other.list(AccessToken.self).records.map { $0.entity.secret.reveal() }
    }

    /// Commits that fail a few times: the ingest reports each failure as a conflict, decides again and succeeds, and
    /// what it reported stored is on the server.
    @Test func anIngestWhoseCommitFailsRunsAgainAndIsStored() async throws {
        try await withTemporaryDirectoryAsync { root in
            let store = TestStore(root: root, backend: .postgresql)
            try KeyFile.create(at: store.keyFile)
            let cache = try TokenStore.create(store.configuration)
            let failures = 3
            try Self.failCommits(of: store, Int64(failures))
            let result = try await cache.ingestApplyingPlan(
                try PlannedWriteTests.response("committed"), context: try Responses.context(authority: Self.tenant, now: PlannedWriteTests.now)
            )
            #expect(result.accessTokenRevision != nil)
            #expect(try Self.accessTokenSecrets(store) == ["at-committed"])
            // Every refused commit was seen, and the one that went through came after them.
            #expect(try Self.commitAttempts(of: store) > failures)
        }
    }

    /// Commits that always fail: the ingest throws a typed conflict (after its planned attempts and the transaction's
    /// retries), and nothing is stored.
    @Test(.timeLimit(.minutes(2))) func anIngestWhoseCommitAlwaysFailsThrows() async throws {
        try await withTemporaryDirectoryAsync { root in
            let store = TestStore(root: root, backend: .postgresql)
            try KeyFile.create(at: store.keyFile)
            let cache = try TokenStore.create(store.configuration)
            try Self.failCommits(of: store, Int64.max)
            var thrown: (any Error)?
            do {
                _ = try await cache.ingestApplyingPlan(
                    try PlannedWriteTests.response("refused"), context: try Responses.context(authority: Self.tenant, now: PlannedWriteTests.now)
                )
            } catch { thrown = error }
            let error = try #require(thrown as? TokenCacheError, "the ingest returned success though no commit went through")
            #expect(error.code == .conflict)
            #expect(try Self.accessTokenSecrets(store).isEmpty)
            #expect(try Self.commitAttempts(of: store) > TokenStore.plannedWriteAttempts)
        }
    }
}
