import Foundation
import Synchronization
import TestSupport
import Testing

/// `cachetool migrate` on a shared store whose tables are of the first version: a host of this build refuses them,
/// naming the command; the command brings them to this build's version in one step, keeping every record; running
/// it again, or on tables already current, does nothing; tables newer than the build are refused.
@Suite(.enabled(if: PostgreSQLTestServer.url != nil, "needs the run's PostgreSQL server (make test starts one)"))
struct SharedStoreMigrationTests {
    /// What turns this build's tables in schema `schema` back into the first version's, as that version made them:
    /// no bucket versions, and a trigger that notifies the writing host's id alone.
    static func firstVersion(_ schema: String) -> String {
        let s = "\"\(schema)\""
        return """
            BEGIN;
            DROP TRIGGER records_inserted ON \(s).records;
            DROP TRIGGER records_updated ON \(s).records;
            DROP TRIGGER records_deleted ON \(s).records;
            DROP FUNCTION \(s).note_change();
            DROP TABLE \(s).buckets;
            CREATE FUNCTION \(s).notify_change() RETURNS trigger LANGUAGE plpgsql AS $body$
            BEGIN
                PERFORM pg_notify('token_cache_\(schema)', coalesce(current_setting('token_cache.host', true), ''));
                RETURN NULL;
            END
            $body$;
            CREATE TRIGGER records_changed AFTER INSERT OR UPDATE OR DELETE ON \(s).records FOR EACH STATEMENT EXECUTE FUNCTION \(s).notify_change();
            UPDATE \(s).schema_version SET version = 1;
            COMMIT;
            """
    }

    static func psql(_ sql: String) throws {
        let base = try #require(PostgreSQLTestServer.url)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(PostgreSQLTestServer.binDirectory) + "/psql")
        process.arguments = ["--no-psqlrc", "--quiet", "--set", "ON_ERROR_STOP=1", "--dbname", base, "--command", sql]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "psql failed on: \(sql)")
    }

    @Test func tablesOfTheFirstVersionAreRefusedUntilMigratedAndKeepEveryRecord() throws {
        let schema = PostgreSQLTestServer.uniqueSchemaName("migrate")
        let url = try #require(PostgreSQLTestServer.url) + "&schema=" + schema
        try CLIStore.with { store in
            let environment = ["TOKEN_CACHE_KEY_FILE": store.keyFile, "TOKEN_CACHE_STORE_TIMEOUT": "15s", "TOKEN_CACHE_DIR": url]
            func run(_ arguments: [String]) throws -> CacheToolRun { try CacheTool.run(arguments, environment: environment) }
            #expect(try run(["init"]).status == 0)
            #expect(try run(["sample-data", "--now", "\(CacheToolTests.now)"]).status == 0)
            let before = try run(["accounts", "--json"])
            #expect(before.status == 0, "\(before.output)")
            try Self.psql(Self.firstVersion(schema))

            // A host of this build refuses the first version's tables, naming the command, and changes nothing.
            let refused = try run(["accounts"])
            #expect(refused.status == 78 && refused.stderr.contains("schema version 1") && refused.stderr.contains("cachetool migrate"), "\(refused.output)")
            let status = try run(["status", "--json"])
            #expect(status.status == 78 && status.stdout.contains("\"schema_version\" : 1"), "\(status.output)")
            let text = try run(["status"])
            #expect(text.stdout.contains("version 1; this build uses version 2: run `cachetool migrate`"), "\(text.output)")

            let migrated = try run(["migrate"])
            #expect(migrated.status == 0 && migrated.stdout.contains("from version 1 to 2"), "\(migrated.output)")
            let after = try run(["accounts", "--json"])
            #expect(after.status == 0 && after.stdout == before.stdout, "\(after.output)")
            #expect(try run(["verify"]).status == 0)

            // Again: nothing to do.
            let again = try run(["migrate", "--json"])
            let json = try #require(try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any], "\(again.output)")
            #expect(again.status == 0 && json["from"] as? Int == 2 && json["to"] as? Int == 2 && json["migrated"] as? Bool == false, "\(json)")

            // Tables newer than this build: refused, untouched.
            try Self.psql("UPDATE \"\(schema)\".schema_version SET version = 99")
            let newer = try run(["migrate"])
            #expect(newer.status == 78 && newer.stderr.contains("knows no migration"), "\(newer.output)")
        }
    }

    /// Two migrations at once make one: the schema's lock orders them, and the second finds nothing to do.
    @Test func twoMigrationsAtOnceMakeOne() throws {
        let schema = PostgreSQLTestServer.uniqueSchemaName("migrate2")
        let url = try #require(PostgreSQLTestServer.url) + "&schema=" + schema
        try CLIStore.with { store in
            let environment = ["TOKEN_CACHE_KEY_FILE": store.keyFile, "TOKEN_CACHE_STORE_TIMEOUT": "15s", "TOKEN_CACHE_DIR": url]
            #expect(try CacheTool.run(["init"], environment: environment).status == 0)
            try Self.psql(Self.firstVersion(schema))
            let results = Mutex<[CacheToolRun]>([])
            DispatchQueue.concurrentPerform(iterations: 2) { _ in
                if let run = try? CacheTool.run(["migrate"], environment: environment) { results.withLock { $0.append(run) } }
            }
            let runs = results.withLock { $0 }
            #expect(runs.count == 2)
            #expect(runs.allSatisfy { $0.status == 0 }, "\(runs.map(\.output))")
            #expect(runs.filter { $0.stdout.contains("from version 1 to 2") }.count == 1, "\(runs.map(\.output))")
        }
    }

    @Test func onADirectoryThereIsNothingToMigrate() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let run = try store.run(["migrate"])
            #expect(run.status == 0 && run.stdout.contains("nothing to migrate"), "\(run.output)")
        }
    }
}
