import TokenCacheStorage

/// The tables a shared store keeps in its schema, and their SQL.
///
/// One row per record: `(space, key, value, version)`, the same sealed bytes under the same blind-index keys as a
/// local store's (FORMAT.md), so that the server holds nothing a local store would not put on disk. `space` is the
/// key space's index in FORMAT.md §3's order, and `version` a number the server assigns from a sequence on every write
/// of the row, never the same twice: a write plan's check compares versions, so that a record deleted and written
/// again between a fetch and an apply is seen as changed. Rows are about 2 KB, so the table keeps them inline and
/// uncompressed (sealed bytes do not compress): `STORAGE EXTERNAL` with `toast_tuple_target = 4080`.
///
/// `schema_version` holds the one number a host checks before it uses the tables: a host refuses a schema it does
/// not know, newer or older, rather than read tables it may misunderstand.
enum PostgreSQLSchema {
    /// The version these statements create.
    static let version: Int32 = 1

    /// `name`, quoted as an identifier (``PostgreSQLAddress/checkSchemaName(_:)`` allows nothing that needs escaping).
    static func quoted(_ name: String) -> String { "\"\(name)\"" }

    /// The qualified names of one store's tables and sequence, as statements name them: built once per store.
    struct Names: Sendable {
        /// The schema, quoted.
        let schema: String
        let records: String
        let rowVersion: String
        let schemaVersion: String

        init(schema name: String) {
            schema = PostgreSQLSchema.quoted(name)
            records = schema + ".records"
            rowVersion = schema + ".row_version"
            schemaVersion = schema + ".schema_version"
        }
    }

    /// The advisory lock key that serialises creations and migrations of one schema (transaction-scoped, so that a
    /// pooled connection never keeps it).
    static func lockKey(_ schema: String) -> String { "token-cache schema \(schema)" }

    /// The connection setting that names the host a connection is of (a custom setting, sent at connect).
    static let hostSetting = "token_cache.host"

    /// The channel the store in schema `name` notifies its changes on (an identifier: the schema name is safe in it).
    static func channel(_ name: String) -> String { "token_cache_\(name)" }

    /// The `application_name` of a change listener's connection to the store in schema `name`: how `cachetool status`
    /// counts the hosts listening, since no session can see another's channels (``SharedStoreServerStatus``). Cut to
    /// the 63 bytes the server keeps (the schema name is ASCII).
    static func listenerApplicationName(_ name: String) -> String { String("token-cache listener \(name)".prefix(63)) }

    /// The statements that create the store's tables in the empty schema `name`, in order, in one transaction.
    static func creation(in name: String) -> [String] {
        let s = quoted(name)
        return [
            "CREATE SCHEMA IF NOT EXISTS \(s)",
            "CREATE TABLE \(s).schema_version (singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton), version integer NOT NULL)",
            "CREATE SEQUENCE \(s).row_version AS bigint",
            """
            CREATE TABLE \(s).records (
                space smallint NOT NULL,
                key bytea NOT NULL,
                value bytea NOT NULL,
                version bigint NOT NULL DEFAULT nextval('\(s).row_version'),
                PRIMARY KEY (space, key)
            ) WITH (toast_tuple_target = 4080, fillfactor = 80)
            """,
            "ALTER TABLE \(s).records ALTER COLUMN value SET STORAGE EXTERNAL",
            applyPlanFunction(in: name),
            // Every statement that changes records notifies the store's channel inside its transaction: delivered if
            // and only if the change commits, with the writing host's id as payload. PostgreSQL folds the repeats of
            // one transaction into one notification.
            """
            CREATE FUNCTION \(s).notify_change() RETURNS trigger LANGUAGE plpgsql AS $body$
            BEGIN
                PERFORM pg_notify('\(channel(name))', coalesce(current_setting('\(hostSetting)', true), ''));
                RETURN NULL;
            END
            $body$
            """,
            "CREATE TRIGGER records_changed AFTER INSERT OR UPDATE OR DELETE ON \(s).records FOR EACH STATEMENT EXECUTE FUNCTION \(s).notify_change()",
            "INSERT INTO \(s).schema_version (version) VALUES (\(version))",
        ]
    }

    /// A write plan in one statement: every checked range must still hold the keys and versions the plan was fetched
    /// with, and every checked count its number, or nothing is written and the function returns false; then the
    /// plan's puts and deletes in their order. Called on a connection whose transactions are serialisable, so that
    /// a concurrent plan that read what this one writes (or the reverse) fails one of the two with a serialisation
    /// failure instead of both committing.
    ///
    /// Each range's expected rows are one byte string: for each row in key order, the key's length (4 bytes, big
    /// endian), the key, and the version (8 bytes, big endian), as `int4send` and `int8send` write them. An empty
    /// `check_end` is an unbounded range; a `check_limit` of 0 an unlimited one.
    static func applyPlanFunction(in name: String) -> String {
        let s = quoted(name)
        return """
            CREATE FUNCTION \(s).apply_plan(
                check_space smallint[], check_start bytea[], check_end bytea[], check_limit integer[], check_expected bytea[],
                count_space smallint[], count_expected bigint[],
                op_put boolean[], op_space smallint[], op_key bytea[], op_value bytea[]
            ) RETURNS boolean LANGUAGE plpgsql AS $body$
            DECLARE
                i integer;
                held bytea;
                counted bigint;
            BEGIN
                FOR i IN 1 .. coalesce(array_length(check_space, 1), 0) LOOP
                    -- Two statements, so that each is planned with its bounds as index conditions.
                    IF length(check_end[i]) = 0 THEN
                        SELECT coalesce(string_agg(int4send(length(r.key)) || r.key || int8send(r.version), ''::bytea ORDER BY r.key), ''::bytea)
                          INTO held
                          FROM (SELECT key, version FROM \(s).records WHERE space = check_space[i] AND key >= check_start[i]
                                 ORDER BY key LIMIT nullif(check_limit[i], 0)) r;
                    ELSE
                        SELECT coalesce(string_agg(int4send(length(r.key)) || r.key || int8send(r.version), ''::bytea ORDER BY r.key), ''::bytea)
                          INTO held
                          FROM (SELECT key, version FROM \(s).records
                                 WHERE space = check_space[i] AND key >= check_start[i] AND key < check_end[i]
                                 ORDER BY key LIMIT nullif(check_limit[i], 0)) r;
                    END IF;
                    IF held <> check_expected[i] THEN RETURN false; END IF;
                END LOOP;
                FOR i IN 1 .. coalesce(array_length(count_space, 1), 0) LOOP
                    SELECT count(*) INTO counted FROM \(s).records WHERE space = count_space[i];
                    IF counted <> count_expected[i] THEN RETURN false; END IF;
                END LOOP;
                FOR i IN 1 .. coalesce(array_length(op_put, 1), 0) LOOP
                    IF op_put[i] THEN
                        INSERT INTO \(s).records (space, key, value) VALUES (op_space[i], op_key[i], op_value[i])
                        ON CONFLICT (space, key) DO UPDATE SET value = excluded.value, version = nextval('\(s).row_version');
                    ELSE
                        DELETE FROM \(s).records WHERE space = op_space[i] AND key = op_key[i];
                    END IF;
                END LOOP;
                RETURN true;
            END
            $body$
            """
    }
}
