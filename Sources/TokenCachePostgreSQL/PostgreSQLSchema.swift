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
/// `buckets` holds a version per *bucket*, the unit a host's cached answers are invalidated by: a statement trigger
/// bumps the version of every bucket a transaction's changes touch, once per transaction, and announces the new
/// versions in the change notification (FORMAT.md §2.2, ``PostgreSQLChangeListener``).
///
/// `schema_version` holds the one number a host checks before it uses the tables: a host refuses a schema it does
/// not know, newer or older, rather than read tables it may misunderstand. An older one is brought up to date by
/// ``migrations(from:in:)`` (`cachetool migrate`), never by a host on its own.
enum PostgreSQLSchema {
    /// The version these statements create.
    static let version: Int32 = 2

    /// `name`, quoted as an identifier (``PostgreSQLAddress/checkSchemaName(_:)`` allows nothing that needs escaping).
    static func quoted(_ name: String) -> String { "\"\(name)\"" }

    /// The qualified names of one store's tables and sequence, as statements name them: built once per store.
    struct Names: Sendable {
        /// The schema, quoted.
        let schema: String
        let records: String
        let rowVersion: String
        let schemaVersion: String
        let buckets: String

        init(schema name: String) {
            schema = PostgreSQLSchema.quoted(name)
            records = schema + ".records"
            rowVersion = schema + ".row_version"
            schemaVersion = schema + ".schema_version"
            buckets = schema + ".buckets"
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
        return ["CREATE SCHEMA IF NOT EXISTS \(s)"] + recordTables(in: name) + changeTracking(in: name) + [
            "INSERT INTO \(s).schema_version (version) VALUES (\(version))"
        ]
    }

    /// The statements that bring the tables in schema `name` from version `old` to ``version``, in order, in one
    /// transaction (under the schema's advisory lock); nil for a version nothing leads from.
    ///
    /// From 1: version 1 notified every change with the writing host's id alone, and hosts dropped every answer they
    /// kept on any change. Version 2 adds the `buckets` table and replaces the trigger by one that bumps and announces
    /// the buckets a change touches. A host of version 1's build still running keeps working on version 2's tables
    /// (its writes bump buckets through the trigger, and it reads any notification as "something changed"), so the
    /// hosts can be restarted onto the new build one at a time after the migration.
    static func migrations(from old: Int32, in name: String) -> [String]? {
        let s = quoted(name)
        switch old {
        case 1:
            return [
                "DROP TRIGGER records_changed ON \(s).records",
                "DROP FUNCTION \(s).notify_change()",
            ] + changeTracking(in: name) + ["UPDATE \(s).schema_version SET version = 2"]
        default:
            return nil
        }
    }

    /// The records, their row-version sequence, the schema's version and the write plans' function: what every
    /// version since the first has.
    static func recordTables(in name: String) -> [String] {
        let s = quoted(name)
        return [
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
        ]
    }

    /// Bucket versions and the change notification (FORMAT.md §2.2).
    ///
    /// A record's bucket (``PostgreSQLBuckets``, which computes the same in Swift) is the first 16 bytes of its key in
    /// the five entity spaces (a home account's `P(hid)`, or an
    /// application's `D("app", client)`), and the empty bucket, the global one, for the header; other `meta` rows
    /// (leases, the cap, cursors) touch none. Each statement that changes records bumps the version of every bucket
    /// it touched that this transaction has not bumped yet (`xact` remembers which transaction bumped it last), and
    /// notifies the store's channel, inside the transaction, with the writing host's id followed by each bump as
    /// `<bucket in hex>:<version>`, or by `*` when they would not fit in a notification. PostgreSQL folds repeated
    /// payloads of one transaction into one; a bucket bumped twice in one transaction is announced once. Under
    /// serialisable writers, two transactions touching one bucket conflict on its row: versions rise in commit order.
    /// Three triggers, since a trigger with a transition table serves one kind of statement.
    static func changeTracking(in name: String) -> [String] {
        let s = quoted(name)
        return [
            "CREATE TABLE \(s).buckets (bucket bytea PRIMARY KEY, version bigint NOT NULL, xact bigint NOT NULL)",
            """
            CREATE FUNCTION \(s).note_change() RETURNS trigger LANGUAGE plpgsql AS $body$
            DECLARE
                bumped text;
            BEGIN
                WITH touched AS (
                    SELECT DISTINCT CASE WHEN space > 0 THEN substring(key FROM 1 FOR 16) ELSE ''::bytea END AS bucket
                      FROM changed WHERE space > 0 OR key = '\\x\(PostgreSQLBuckets.headerKeyHex)'::bytea
                ), bumps AS (
                    INSERT INTO \(s).buckets AS b (bucket, version, xact) SELECT bucket, 1, txid_current() FROM touched
                    ON CONFLICT (bucket) DO UPDATE SET version = b.version + 1, xact = excluded.xact WHERE b.xact <> excluded.xact
                    RETURNING b.bucket, b.version
                )
                SELECT string_agg(encode(bucket, 'hex') || ':' || version, ' ' ORDER BY bucket) INTO bumped FROM bumps;
                PERFORM pg_notify(
                    '\(channel(name))',
                    coalesce(current_setting('\(hostSetting)', true), '')
                        || CASE WHEN bumped IS NULL THEN '' WHEN length(bumped) > \(maximumAnnouncement) THEN ' *' ELSE ' ' || bumped END
                );
                RETURN NULL;
            END
            $body$
            """,
            "CREATE TRIGGER records_inserted AFTER INSERT ON \(s).records REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION \(s).note_change()",
            "CREATE TRIGGER records_updated AFTER UPDATE ON \(s).records REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION \(s).note_change()",
            "CREATE TRIGGER records_deleted AFTER DELETE ON \(s).records REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION \(s).note_change()",
        ]
    }

    /// The longest list of bumps a notification carries (its payload may hold 8,000 bytes): longer, and it says `*`,
    /// every bucket.
    static let maximumAnnouncement = 7_800

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
