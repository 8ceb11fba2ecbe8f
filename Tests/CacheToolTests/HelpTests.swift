import Foundation
import Testing

/// Golden texts: the complete output of `cachetool --help` and of every subcommand's `--help` at a fixed terminal
/// width, so that any change in wording, wrapping or option order is a deliberate edit of the text here.
@Suite struct HelpTests {
    struct Golden: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        /// The help as printed, less its final line break (a multi-line literal has none).
        let text: String
        var testDescription: String { (["cachetool"] + arguments + ["--help"]).joined(separator: " ") }
    }

    static let goldens = [
        Golden(arguments: [], text: HelpText.root),
        Golden(arguments: ["init"], text: HelpText.initialize),
        Golden(arguments: ["migrate"], text: HelpText.migrate),
        Golden(arguments: ["inspect"], text: HelpText.inspect),
        Golden(arguments: ["info"], text: HelpText.info),
        Golden(arguments: ["status"], text: HelpText.status),
        Golden(arguments: ["stats"], text: HelpText.stats),
        Golden(arguments: ["purge-expired"], text: HelpText.purgeExpired),
        Golden(arguments: ["cap"], text: HelpText.cap),
        Golden(arguments: ["quarantine"], text: HelpText.quarantine),
        Golden(arguments: ["salvage"], text: HelpText.salvage),
        Golden(arguments: ["rekey"], text: HelpText.rekey),
        Golden(arguments: ["verify"], text: HelpText.verify),
        Golden(arguments: ["backup"], text: HelpText.backup),
        Golden(arguments: ["copy"], text: HelpText.copy),
        Golden(arguments: ["compact"], text: HelpText.compact),
        Golden(arguments: ["ingest"], text: HelpText.ingest),
        Golden(arguments: ["lookup"], text: HelpText.lookup),
        Golden(arguments: ["accounts"], text: HelpText.accounts),
        Golden(arguments: ["remove-account"], text: HelpText.removeAccount),
        Golden(arguments: ["import"], text: HelpText.importCache),
        Golden(arguments: ["export"], text: HelpText.exportCache),
        Golden(arguments: ["sample-data"], text: HelpText.sampleData),
        Golden(arguments: ["bench"], text: HelpText.bench),
    ]

    /// The help text wraps at the terminal width; a pipe has none, so COLUMNS decides.
    static func help(_ arguments: [String]) throws -> CacheToolRun {
        try CacheTool.run(arguments + ["--help"], environment: ["COLUMNS": "80"])
    }

    @Test(arguments: goldens)
    func helpIsTheGoldenText(golden: Golden) throws {
        let run = try Self.help(golden.arguments)
        #expect(run.exitedNormally && run.status == 0)
        #expect(run.stderr == "")
        let expected = golden.text + "\n"
        #expect(run.stdout == expected, "first difference: \(Self.firstDifference(run.stdout, expected))")
    }

    /// Every subcommand the top-level help lists has a golden text.
    @Test func everySubcommandHasAGoldenText() throws {
        let lines = try Self.help([]).stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex(of: "SUBCOMMANDS:"))
        let listed = lines[(start + 1)...].prefix { !$0.isEmpty }
            .filter { $0.hasPrefix("  ") && !$0.hasPrefix("   ") }
            .compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(listed.count == 23)
        #expect(Set(listed) == Set(Self.goldens.compactMap(\.arguments.first)))
    }

    /// The first line where `actual` and `expected` differ, both versions, for a readable failure.
    static func firstDifference(_ actual: String, _ expected: String) -> String {
        let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
        let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
        for index in 0..<max(actualLines.count, expectedLines.count) {
            let got = index < actualLines.count ? String(actualLines[index]) : "<end>"
            let wanted = index < expectedLines.count ? String(expectedLines[index]) : "<end>"
            if got != wanted { return "line \(index + 1): got \"\(got)\", expected \"\(wanted)\"" }
        }
        return "none"
    }
}

enum HelpText {
    static let root = """
        OVERVIEW: Create, inspect and debug encrypted token-cache stores.

        The store is found at --store, else $TOKEN_CACHE_DIR, else
        $XDG_DATA_HOME/token-cache, else ~/.local/share/token-cache. Its key comes from
        --key-file, else $TOKEN_CACHE_KEY (base64), else $TOKEN_CACHE_PASSPHRASE, else
        $TOKEN_CACHE_KEY_FILE, else $XDG_CONFIG_HOME/token-cache/key
        (~/.config/token-cache/key).

        Exit codes: 0 success, 1 other failure, 64 usage, 65 corrupt data, 66 store or
        key not found, 74 storage full or I/O error, 75 conflict (retry), 77 wrong key
        or insecure permissions, 78 unsupported environment or format. `lookup
        --exit-code` adds 10 (refresh) and 11 (interaction required).

        USAGE: cachetool <subcommand>

        OPTIONS:
          --version               Show the version.
          -h, --help              Show help information.

        SUBCOMMANDS:
          init                    Create the key file and the store (or check that they
                                  open).
          migrate                 Bring a shared store's tables to this build's version.
          inspect                 List accounts and credentials, secrets redacted.
          info                    Show the store's format, size, keys and record counts.
          status                  Show the store's live state: server, sessions,
                                  listeners, leases held, clock.
          stats                   Count what a store holds and how it is laid out, for
                                  operators.
          verify                  Decrypt every record and check that each is stored
                                  where its fields say (exit 65 on any problem).
          backup                  Copy the store, consistent and compacted, into a new
                                  directory while it is in use.
          copy                    Copy every record, sealed, between a directory and a
                                  shared store (either way).
          compact                 Rewrite the store compacted, giving the space of
                                  deleted records back to the disk.
          purge-expired           Remove expired access tokens (and refresh tokens past
                                  their own expiry).
          cap                     Show, set or remove the store's cap on the number of
                                  access tokens.
          rekey                   Protect the store with a new key file or passphrase,
                                  or seal its records under a new data key.
          quarantine              Move a damaged store aside (STORE.corrupt-TIMESTAMP)
                                  and create an empty one in its place.
          salvage                 Copy every record that can still be read from a
                                  damaged store into a new store.
          ingest                  Store a raw OAuth2/OIDC token response (access,
                                  refresh and ID token, account, app metadata) in one
                                  transaction.
          lookup                  Answer a silent token request: hit, refresh or
                                  interaction_required.
          accounts                List signed-in accounts with their tenant profiles.
          remove-account          Sign an account out: for one client (--client-id) or
                                  for every client (--all-clients). App metadata stays.
          import                  Import an MSAL serialized token cache (JSON) into the
                                  store.
          export                  Write the store as an MSAL serialized token cache
                                  (JSON).
          sample-data             Write realistic sample accounts and tokens (fake,
                                  unsigned) into an existing store.
          bench                   Measure lookups, ingest and cold open on a temporary
                                  synthetic store on this machine.

          See 'cachetool help <subcommand>' for detailed help.
        """

    static let initialize = """
        OVERVIEW: Create the key file and the store (or check that they open).

        With a key file, a missing key file is created with 32 random bytes, mode 0600.
        With $TOKEN_CACHE_PASSPHRASE the store is protected by Argon2id instead.
        Running init again on an existing store only checks that the key opens it: it
        never makes a key for a store that exists (a new key cannot open it; restore
        the key file from a backup). A store whose creation was interrupted before it
        had a key (an empty data file without a header) is completed.

        Records are sealed with AES-256-GCM where the processor has AES-NI and
        PCLMULQDQ, else with XChaCha20-Poly1305; --cipher chooses. A store sealed with
        AES-256-GCM does not open on a machine without them (exit 78): give
        xchacha20-poly1305 for a store that such machines share. `rekey
        --rotate-data-key --cipher` converts a store later.

        USAGE: cachetool init [--store <dir>] [--key-file <path>] [--passphrase-cost <passphrase-cost>] [--cipher <cipher>]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --passphrase-cost <passphrase-cost>
                                  Argon2id cost for a passphrase-protected store:
                                  interactive, moderate or sensitive. (values:
                                  interactive, moderate, sensitive; default:
                                  interactive)
          --cipher <cipher>       The cipher records are sealed with: aes-256-gcm
                                  (needs AES-NI) or xchacha20-poly1305 (runs
                                  everywhere). Default: $TOKEN_CACHE_CIPHER, else the
                                  faster one this machine runs. (values: aes-256-gcm,
                                  xchacha20-poly1305)
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let inspect = """
        OVERVIEW: List accounts and credentials, secrets redacted.

        The table lists people first, by username (in storage order past 50,000 Account
        records): one line per account (username, home tenant, profiles, clients, next
        expiry), then that account's credentials under it; then tokens of home accounts
        without an Account record, then app metadata. Columns fit the terminal
        (identifiers are cut in the middle); --output wide shows every value in full.
        On a terminal, expired tokens are red, tokens due for refresh yellow and family
        tokens magenta; never when piped, with NO_COLOR set, or with --color never.

        Records are printed as they are read, so memory stays small whatever the size
        of the store. --json writes one object: store, now, an array per kind (MSAL
        field names as `export` writes them, absent fields omitted, plus revision and
        fingerprint), corrupt_records; with --limit also limit and truncated. Filters
        combine (all must match). Damaged records are never shown; they are listed by
        fingerprint after the output (exit code 65). Tokens are shown only with
        --include-secrets.

        USAGE: cachetool inspect [--store <dir>] [--key-file <path>] [--output table|wide|json] [--summary] [--limit <N>]
                                 [--kind <kind>] [--expired] [--expiring-within <duration>] [--account <account> | --username <username>]
                                 [--client-id <client-id>] [--environment <host>] [--color <when>] [--include-secrets] [--now <seconds>]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --output <format>       Output format. (values: table, wide, json)
          --json                  Print JSON for scripts (same as --output json).
          --wide                  Show every value in full, with environment and
                                  fingerprint columns (same as --output wide).
          --summary               Print counts per kind and expiry state instead of the
                                  records.
          --color <when>          Colour on a terminal. (values: auto, always, never;
                                  default: auto)
          --include-secrets       Show token secrets instead of the redaction marker.
          --account <account>     Only this account: its home account id, or its
                                  username.
          --username <username>   Only accounts with this username (case-insensitive;
                                  all of them if several).
          --client-id <client-id> Only this client id.
          --environment <host>    Only records in this host's cloud (its alias group).
          --kind <kind>           Only these kinds: account, access-token,
                                  refresh-token, id-token, app-metadata (repeat or
                                  separate with commas).
          --expired               Only tokens past their expiry.
          --expiring-within <duration>
                                  Only tokens that expire within this time (90s, 15m,
                                  2h, 7d).
          --limit <N>             Show at most this many records.
          --now <seconds>         Current time in Unix seconds, for relative expiry
                                  (default: now).
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let migrate = """
        OVERVIEW: Bring a shared store's tables to this build's version.

        Runs every migration from the tables' version to this build's in one
        transaction, under the schema's advisory lock: all or nothing, and two
        migrations started at once make one. It needs no key and changes no record.
        Hosts of the older build keep working on the migrated tables until they are
        restarted onto this build; hosts of this build refuse older tables until they
        are migrated. Running it again does nothing. A directory's format upgrades
        itself when opened: there, nothing is done.

        Exit codes: 0 migrated or already current; 66 no store in the schema; 69 server
        unavailable; 78 tables newer than this build knows.

        USAGE: cachetool migrate [--store <dir>] [--key-file <path>] [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let status = """
        OVERVIEW: Show the store's live state: server, sessions, listeners, leases
        held, clock.

        On a shared store: the server and the version of the store's tables (and
        whether this build knows it), rows per key space, the size of the table, its
        indexes and TOAST, the other sessions of the store's hosts and the change
        listeners among them (sessions under the application_name 'token-cache listener
        <schema>'), the notification queue's use, and the server's clock against this
        host's. On a directory: its size and reader slots. On both: the refresh leases
        held now (how many, how long ago the oldest was taken) and the records per
        kind. Every wait on a server is bounded by TOKEN_CACHE_STORE_TIMEOUT.

        Exit codes: 0 the store is usable by this build with this key; otherwise what
        was found is shown and the exit code says why not: 66 no store (or key), 69
        server unavailable, 77 wrong key, 78 tables of a version this build does not
        know.

        USAGE: cachetool status [--store <dir>] [--key-file <path>] [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let copy = """
        OVERVIEW: Copy every record, sealed, between a directory and a shared store
        (either way).

        The copy takes the store's header (its id and wrapped data keys), so records
        are copied as they are stored, never decrypted, and the same key opens the
        copy: a directory copy of a shared store is a backup of it. The destination
        (--to, a directory or a postgresql:// URL) is created when missing; one that
        holds records is refused unless --replace is given, which removes them first.
        The copy is one snapshot, written 256 records per transaction with the header
        last: a copy cut short leaves no header, so nothing takes it for a store (copy
        again with --replace). Refresh leases are not copied. Every wait on a server is
        bounded by TOKEN_CACHE_STORE_TIMEOUT.

        Exit codes: 0 copied and read back through the key, 64 the destination holds
        records (without --replace), is the store itself or a file, 65 the store is
        damaged, 66 no store or key, 69 server unavailable, 74 disk full or I/O error,
        77 wrong key or insecure permissions.

        USAGE: cachetool copy [--store <dir>] [--key-file <path>] --to <dir|url> [--replace] [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --to <dir|url>          The destination: a directory or a postgresql:// URL.
          --replace               Remove the records the destination holds before
                                  copying.
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let info = """
        OVERVIEW: Show the store's format, size, keys and record counts.

        JSON: numbers are numbers. readers_in_use counts the reader slots held now and
        stale_readers those of processes that are gone (as stats counts them),
        max_readers the slots there are; readers ("in use/max" as a string) is kept for
        the scripts that read it.

        USAGE: cachetool info [--store <dir>] [--key-file <path>] [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let verify = """
        OVERVIEW: Decrypt every record and check that each is stored where its fields
        say (exit 65 on any problem).

        Problems are listed by record fingerprint, never by content: records that do
        not authenticate or decode (corrupt), records that decrypt but sit under a key
        their fields do not derive (misplaced), a damaged access-token cap or
        kept-MSAL-sections record, and damage to LMDB's meta pages.

        --repair fixes what is found at the level of records, after writing a
        consistent copy of the whole store to --backup-dir (default: a new directory
        beside the store, STORE.before-repair-TIMESTAMP; the same key opens it, so
        restoring is moving it back). Corrupt records are removed; a misplaced record
        is re-sealed under the key its fields derive, or removed when a record is
        already stored there; lone access tokens are placed under their bucket prefix.
        Every change is listed by fingerprint. A record another process rewrites
        meanwhile is left as it is. Nothing is changed, and no copy made, when nothing
        needs repair. Meta-page damage is not repaired: see "Recovering a damaged
        store" in the README.

        JSON keys: verified {kind: count}, lone_tokens_under_entry_key,
        meta_page_problem, data_keys [{id, active, cipher, records}],
        data_key_rotation_pending, problems [{kind, fingerprint, problem, reason}];
        with --repair also repair {backup, changes [{record, fingerprint, action,
        reason}], lone_tokens_placed, skipped}.

        Exit codes: 0 clean (after --repair: repaired and clean), 64 usage, 65 problems
        found (after --repair: problems left), 66 store or key not found, 74 storage
        full or I/O error (the backup or a repair write failed; what committed stays),
        75 conflict, 77 wrong key.

        USAGE: cachetool verify [--store <dir>] [--key-file <path>] [--repair] [--backup-dir <dir>] [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --repair                Fix what is found, after backing the store up (see
                                  below).
          --backup-dir <dir>      Where --repair writes its backup first.
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let backup = """
        OVERVIEW: Copy the store, consistent and compacted, into a new directory while
        it is in use.

        The copy is one snapshot: every record of one committed write, none of a later
        one, even while other processes write. It is a store of its own that the same
        key opens (its files mode 0600, its directory 0700). To restore, stop every
        program using the store and move the copy's data.mdb over the store's, or point
        --store at the copy.

        Exit codes: 0 copied and read back, 64 the destination is a file, not empty,
        already a store or the store itself, 65 the store is damaged, 66 no store or
        key, 74 disk full or I/O error (nothing is left behind), 77 wrong key or
        insecure permissions, 78 unsupported environment.

        USAGE: cachetool backup [--store <dir>] [--key-file <path>] --output <dir> [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          -o, --output <dir>      A new or empty directory for the copy.
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let compact = """
        OVERVIEW: Rewrite the store compacted, giving the space of deleted records back
        to the disk.

        The store must not be open anywhere: compaction refuses (exit 75, naming the
        process to stop) while a process has it open, and programs that open it
        meanwhile wait until it is done. The compacted file is written beside the
        store, fsynced, and renamed over data.mdb: a crash at any moment leaves the old
        store or the compacted one, with the same records (a leftover
        data.mdb.compacting is removed by the next compact). No key is needed.

        Exit codes: 0 compacted, 65 the store is damaged, 66 no store, 74 disk full or
        I/O error (the store is unchanged), 75 the store is open in another process, 77
        insecure permissions, 78 unsupported environment.

        USAGE: cachetool compact [--store <dir>] [--key-file <path>] [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let ingest = """
        OVERVIEW: Store a raw OAuth2/OIDC token response (access, refresh and ID token,
        account, app metadata) in one transaction.

        The response is read from RESPONSE_FILE, or from standard input when it is '-'
        or absent.

        USAGE: cachetool ingest [<options>] --client-id <client-id> --authority <authority> --scopes <scopes> [<response-file>]

        ARGUMENTS:
          <response-file>         The token response JSON file, or '-' for standard
                                  input.

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --client-id <client-id> The client (application) id the token was issued to.
          --authority <authority> The authority URL the request went to, e.g.
                                  https://login.microsoftonline.com/common.
          --scopes <scopes>       The scopes that were requested, separated by spaces
                                  or commas.
          --grant-type <grant-type>
                                  The grant of the request (authorization_code,
                                  refresh_token, client_credentials, …).
          --now <seconds>         Request time in Unix seconds (default: now).
          --ext-cache-key <key>   The extended cache key of a token obtained with extra
                                  request parameters (MSAL's ext_cache_key).
          --parameter <name=value>
                                  An extra body parameter of the request, e.g.
                                  fmi_path=Some/Path (repeatable): the extended cache
                                  key is derived from them as MSAL derives it.
          --on-behalf-of <key>    The on-behalf-of partition: an assertion's hash
                                  (MSAL's user_assertion_hash) or a long-running
                                  process's own key.
          --assertion-file <path> A file holding the caller's assertion (its incoming
                                  token): the partition is its hash.
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let lookup = """
        OVERVIEW: Answer a silent token request: hit, refresh or interaction_required.

        JSON keys (stable): outcome, refresh_recommended, family_membership (member |
        not_member | unknown; with unknown, do not delete a family refresh token whose
        redemption fails), access_token {secret, home_account_id, environment, realm,
        client_id, target, token_type, key_id, ext_cache_key, user_assertion_hash,
        cached_at, expires_on, extended_expires_on, refresh_on}, refresh_token {secret,
        home_account_id, environment, client_id, family_id}, id_token {secret, realm,
        claims}, account {home_account_id, environment, realm, username,
        local_account_id, authority_type}; absent objects and fields are null, times
        are integers (Unix seconds); corrupt_records [{kind, fingerprint, reason}]
        lists damaged records the lookup had to skip. An --account username that no
        account has answers interaction_required (a note on standard error says so).

        Exit codes: 0 for every outcome; with --exit-code, 0 for hit, 10 for refresh
        and 11 for interaction_required. 65 when a damaged record was skipped, whatever
        the outcome (the answer printed is still the right one for the rest of the
        cache); 64 usage, 66 store or key not found, 77 wrong key.

        USAGE: cachetool lookup [<options>] --client-id <client-id> --account <account> --scopes <scopes>

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --client-id <client-id> The client (application) id.
          --account <account>     The home account id (uid.utid), or the account's
                                  username.
          --authority <authority> Authority URL (gives the environment and the realm).
          --environment <environment>
                                  Authority host, with --realm instead of --authority.
          --realm <realm>         Tenant, with --environment.
          --scopes <scopes>       The requested scopes, separated by spaces or commas.
          --token-type <token-type>
                                  Token type (default Bearer).
          --key-id <key-id>       Key id of a PoP or SSH-certificate token.
          --ext-cache-key <key>   The extended cache key of a token obtained with extra
                                  request parameters (MSAL's ext_cache_key).
          --parameter <name=value>
                                  An extra body parameter of the request, e.g.
                                  fmi_path=Some/Path (repeatable): the extended cache
                                  key is derived from them as MSAL derives it.
          --on-behalf-of <key>    The on-behalf-of partition: an assertion's hash
                                  (MSAL's user_assertion_hash) or a long-running
                                  process's own key.
          --assertion-file <path> A file holding the caller's assertion (its incoming
                                  token): the partition is its hash.
          --now <seconds>         Current time in Unix seconds (default: now).
          --json                  Print JSON.
          --include-secrets       Show token secrets instead of the redaction marker.
          --exit-code             Exit 0 for hit, 10 for refresh, 11 for
                                  interaction_required.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let accounts = """
        OVERVIEW: List signed-in accounts with their tenant profiles.

        Without --client-id every account is listed; with it, only those the client can
        use silently (a refresh token of the client, or of its family). JSON:
        {"accounts": [{home_account_id, username, profiles: [{environment, realm,
        username, local_account_id, authority_type}]}]}.

        USAGE: cachetool accounts [--store <dir>] [--key-file <path>] [--client-id <client-id>] [--environment <environment>] [--username <username>] [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --client-id <client-id> Only accounts this client can use silently.
          --environment <environment>
                                  Only profiles in this host's cloud (alias group).
          --username <username>   Only accounts with this username (case-insensitive).
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let removeAccount = """
        OVERVIEW: Sign an account out: for one client (--client-id) or for every client
        (--all-clients). App metadata stays.

        With --on-behalf-of or --assertion-file instead of --account, signs one
        on-behalf-of partition out: the access and refresh tokens a web API holds for
        that caller; the account's own tokens and profile stay.

        USAGE: cachetool remove-account [--store <dir>] [--key-file <path>] [--account <account>] [--on-behalf-of <key>] [--assertion-file <path>] [--client-id <client-id>] [--all-clients] [--environment <environment>] [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --account <account>     The home account id, or the account's username.
          --on-behalf-of <key>    The on-behalf-of partition: an assertion's hash
                                  (MSAL's user_assertion_hash) or a long-running
                                  process's own key.
          --assertion-file <path> A file holding the caller's assertion (its incoming
                                  token): the partition is its hash.
          --client-id <client-id> Remove what this client holds (and the family refresh
                                  token if it is a member).
          --all-clients           Remove the account's credentials of every client.
          --environment <environment>
                                  Only in this host's cloud (alias group).
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let sampleData = """
        OVERVIEW: Write realistic sample accounts and tokens (fake, unsigned) into an
        existing store.

        USAGE: cachetool sample-data [--store <dir>] [--key-file <path>] [--now <seconds>]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --now <seconds>         Current time in Unix seconds the sample expiries are
                                  relative to.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let importCache = """
        OVERVIEW: Import an MSAL serialized token cache (JSON) into the store.

        Reads FILE, or standard input when it is '-' or absent. The whole file is
        checked before anything is written: one invalid entry imports nothing (exit 65)
        unless --skip-invalid. Merging keeps, for each identity, the record written
        later (cached_at, then expires_on), committing --batch-size entries per
        transaction (at most 10000, so that no transaction keeps the store's other
        writers waiting): an import that is stopped or killed keeps what it committed,
        and running it again finishes it. --replace makes the store exactly the file,
        in one transaction, for a file of at most 10000 entries: stopped or killed, the
        store is the old one or the new one. A file of more than 1000000 entries is
        refused. Unknown fields and sections are kept, encrypted, and written back by
        export.

        --discover lists, without importing, the plaintext caches left for this user by
        Azure CLI (~/.azure/msal_token_cache.json, or in $AZURE_CONFIG_DIR) and by the
        Azure Identity libraries (~/.IdentityService/msal.cache*, *.cae, *.nocae), with
        their counts; --from imports the one found.

        --shred-source: once the import has committed and a read-back found every entry
        of the file in the store (with the same secret, a record of the same identity
        written later, or another entry of the file that the store holds for the
        identity), the file is overwritten with zeros and removed. Never after rejected
        entries, never for standard input; if the file is kept, the command says why
        and exits 1. From before the import reads the file until it is removed, the
        command holds the lock Azure CLI and msal-extensions take to write it (an
        exclusive flock on FILE.lockfile), waiting for it at most
        TOKEN_CACHE_LOCK_TIMEOUT seconds (30; then it exits 75 naming the holder,
        nothing imported); a file whose identity or content changed since the command
        started is kept. Overwriting cannot be guaranteed on copy-on-write or
        journaling file systems and SSDs, and copies may exist: if the file may have
        been copied, revoke its tokens.

        JSON keys (stable): entries, written {AccessToken, RefreshToken, IdToken,
        Account, AppMetadata}, kept_existing {…}, merged_in_file {…},
        access_tokens_superseded, removed_by_replace, kept_sections [names], rejected
        [{section, fingerprint, offset, field, reason}], source (path or null),
        verified (null or {identical, superseded, merged, unverified [{section,
        fingerprint, offset, reason}]}), shredded, kept_because (null or why). With
        --discover: caches [{tool, path, size, mode, modified, entries {…}, accounts,
        tokens, invalid_entries, problem}], searched [paths].

        USAGE: cachetool import [--store <dir>] [--key-file <path>] [--replace] [--skip-invalid] [--batch-size <n>] [--discover] [--from <tool>] [--shred-source] [--json] [<file>]

        ARGUMENTS:
          <file>                  The MSAL cache file, or '-' for standard input.

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --replace               Replace everything the store holds with the file's
                                  records (one transaction).
          --skip-invalid          Import the valid entries and list the invalid ones
                                  (by fingerprint).
          --batch-size <n>        Entries per write transaction when merging (at most
                                  10000). (default: 1000)
          --discover              List the plaintext MSAL caches found for this user,
                                  without importing.
          --from <tool>           Import the cache this tool left (see --discover).
                                  (values: azure-cli, azure-identity)
          --shred-source          After a complete, verified import, overwrite the file
                                  with zeros and remove it.
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let exportCache = """
        OVERVIEW: Write the store as an MSAL serialized token cache (JSON).

        Writes to standard output, or to FILE with -o. Without --include-secrets every
        secret is "<redacted>" (said on standard error): the file can be read and
        shared, not used to sign in. With it, a file is created with mode 0600 (an
        existing file with a looser mode is refused), and a terminal as standard output
        needs --force.

        USAGE: cachetool export [--store <dir>] [--key-file <path>] [--output <file>] [--include-secrets] [--force] [--account <account>] [--client-id <client-id>] [--environment <host>]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          -o, --output <file>     Write to this file instead of standard output.
          --include-secrets       Write the tokens themselves instead of the redaction
                                  marker.
          --force                 With --include-secrets, write to standard output even
                                  when it is a terminal.
          --account <account>     Only this account: its home account id (uid.utid), or
                                  its username.
          --client-id <client-id> Only this client's records.
          --environment <host>    Only this authority host's cloud (and its aliases).
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let bench = """
        OVERVIEW: Measure lookups, ingest and cold open on a temporary synthetic store
        on this machine.

        Builds a store of N synthetic access tokens in a fresh directory (under
        $TMPDIR, else /tmp: a real disk, so fsync is real), measures, and removes it
        unless --keep. Population (default): per account 10 scope sets (access tokens,
        1-3 scopes each) over 8 buckets (4 clients x 2 realms, home tenant + one guest
        of 1,009), 1-3 per bucket; 2 Account records, 3 refresh tokens (one family), 8
        ID tokens; 4 app metadata in all. Secrets: access tokens 1,000-1,080 bytes,
        refresh tokens 1,000-1,099, ID tokens 1,100-1,299. many-scopes: 5-20 scope sets
        per account.

        Queries are drawn uniformly over all stored access tokens: M per lookup figure
        and for the floor, M/10 ingests (20 to 1,000), M/200 cold opens (5 to 30).
        Figures (stable names, also the keys of --json): lookup_hit, lookup_miss (an
        account never signed in), lookup_refresh (no access token for the scope, a
        refresh token to redeem), lookup_hit_companions (a hit, then its refresh token,
        ID token and account read); client_token_hit (TokenClient.token(for:refresh:)
        answered by a lookup, its L1 off), client_token_l1_hit (each request asked,
        then at once again: the repeat, answered by the client's in-process L1),
        client_refresh (a forced refresh whose closure returns a prepared response at
        once: lease, rotation and ingest in two fsync'd commits, then the answer read
        back); ingest_durable (one refresh-grant token response, fsync'd);
        cold_open_first_lookup (a fresh process: open the store and answer one hit);
        process_start (spawn to main of that process); floor_get_decrypt (one read
        transaction: get a stored access-token record and decrypt it with the store's
        cipher, no token-cache logic); floor_get_decrypt_aes_256_gcm and
        floor_get_decrypt_xchacha20_poly1305 (the same get, each record's cache lines
        read, then a copy of it re-sealed in memory under that cipher opened: both
        measured alike, whatever the store's cipher; null where the processor does not
        run it). Each has p50_ns, p90_ns, p99_ns (nearest rank) and samples; the lookup
        figures also allocations_per_call (calls to the C allocator, counted in this
        process) and instructions_per_call (user-space, from the CPU's counters; null
        where the machine has none), from a second, untimed pass over the same queries.

        readers: lookups per second of one reader thread, two threads sharing one open
        store, one reader process and two processes each opening the store (hit
        queries, uniform; readers start together; 2M per reader, 1,000 to 200,000; the
        median of 3 rounds, run in turn), and the two scalings (two over one). Also
        store_bytes (data.mdb; the store is loaded in key order, so its pages are full:
        a store grown by puts in random key order is about 40% larger) and
        msal_json_bytes (the MSAL JSON export of the same records, with secrets), the
        CPU model, the cipher (the store's: AES-256-GCM where the processor runs it, or
        $TOKEN_CACHE_CIPHER) and the population. Nothing secret is printed.

        USAGE: cachetool bench --tokens <N> [--lookups <M>] [--dir <D>] [--keep] [--populate-only] [--json] [--population <profile>] [--seed <S>]

        OPTIONS:
          --tokens <N>            Access tokens in the store.
          --lookups <M>           Samples per lookup figure. (default: 10000)
          --dir <D>               Directory for the store (created if missing; default:
                                  a fresh one in $TMPDIR).
          --keep                  Keep the store and its key file (<D>/store, <D>/key)
                                  instead of removing them.
          --populate-only         Only write the population into <D>/store (key
                                  <D>/key) and keep it: a large store to try other
                                  commands on.
          --json                  Print one JSON object.
          --population <profile>  Population profile. (values: default, many-scopes;
                                  default: default)
          --seed <S>              Seed of the population and the query draws. (default:
                                  0)
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let stats = """
        OVERVIEW: Count what a store holds and how it is laid out, for operators.

        Records per kind; access tokens valid, refresh due (their refresh_on passed, or
        under 5 min left: of those, a silent lookup no longer returns the ones under 5
        min) and expired, as inspect --summary counts them; home accounts (app-only
        tokens, of a client acting as itself, are counted apart), the ten largest, and
        every client, each by a keyed fingerprint (the identifiers too with
        --reveal-identifiers); the oldest and newest write; the map's size and use; per
        database the entries, B-tree depth and pages; the reader slots in use and stale
        ones (of processes that are gone); the files' sizes. Reads every record once,
        in bounded memory. Damaged records are counted and listed by fingerprint on
        standard error (exit code 65).

        JSON keys: records, access_tokens {valid, refresh_due, expiring_soon (of
        refresh_due, under 5 min left), expired, cap}, refresh_tokens_expired,
        home_accounts, app_only_tokens, largest_accounts [{fingerprint,
        home_account_id?, records, access_tokens}], clients [{fingerprint, client_id?,
        access_tokens, refresh_tokens, id_tokens, app_metadata}], clients_truncated,
        oldest_write, newest_write, storage {page_size, map_size, maximum_map_size,
        used_bytes, databases [...], readers {max, in_use, stale, slots [...]}, files
        {...}}, corrupt_records. Times are Unix seconds.

        Exit codes: 0 success, 64 usage, 65 damaged records (counted and listed) or a
        damaged store, 66 store or key not found, 74 I/O error, 77 wrong key or
        permissions.

        USAGE: cachetool stats [--store <dir>] [--key-file <path>] [--json] [--reveal-identifiers] [--now <seconds>]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --json                  Print JSON.
          --reveal-identifiers    Show home account ids and client ids beside their
                                  fingerprints.
          --now <seconds>         Current time in Unix seconds, for expiry and ages
                                  (default: now).
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let quarantine = """
        OVERVIEW: Move a damaged store aside (STORE.corrupt-TIMESTAMP) and create an
        empty one in its place.

        For a store that cannot be used at all: it does not open (a damaged header or
        LMDB environment), LMDB's meta pages disagree, or a B-tree page is damaged. The
        store directory is renamed, whole and untouched, to STORE.corrupt-TIMESTAMP
        beside it (one rename: a crash leaves it under one name or the other), and a
        new, empty store is created with the same key. Its users sign in again; the old
        files stay for a later look. A store that opens and whose trees are whole is
        refused: damaged records are for `cachetool verify --repair`, which keeps
        everything else.

        Asks before moving on a terminal; elsewhere --yes is required. Refused while
        any process has the store open (the process is named).

        JSON keys: directory, moved_to, damage (null with --force).

        Exit codes: 0 moved and recreated, 1 not damaged (nothing moved), 64 usage or
        not confirmed, 66 store or key not found, 74 I/O error, 75 the store is open in
        a process, 77 insecure permissions.

        USAGE: cachetool quarantine [--store <dir>] [--key-file <path>] [--yes] [--force] [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --yes                   Do not ask.
          --force                 Move the store aside without checking that it is
                                  damaged (for a store whose check itself fails).
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let salvage = """
        OVERVIEW: Copy every record that can still be read from a damaged store into a
        new store.

        For a store that opens but has damaged B-tree pages, when there is no backup.
        Each database is read in 65,536 key ranges, each on its own, so a damaged page
        loses only the records of the ranges that pass through it; each record is
        authenticated before it is copied, and damaged ones are left. The new store
        gets the old header (the same key opens it) and is verified at the end. LMDB
        crashes on some damaged pages: salvage then starts again by itself after the
        range that crashed it. Stopped any other way (Ctrl-C, kill, the OOM killer), it
        skips nothing: run it again with the same -o and it goes on from its last
        commit. Nothing is written to the damaged store.

        The output is a new directory, or an empty one closed to other users, outside
        the store; it is checked before anything is copied, and one salvage at a time
        writes it.

        Then stop the programs that use the store, move it aside (`cachetool quarantine
        --force`, or mv) and move the new store into its place.

        JSON keys: directory, salvaged {kind: count}, damaged_records,
        unreadable_ranges, resumed.

        Exit codes: 0 copied (the new store verifies), 64 usage, or the output is a
        file, not empty, the store or inside it, 65 nothing can be read (the header
        holding the keys is damaged), 66 store or key not found, 74 disk full or I/O
        error (run it again with the same -o to continue), 75 another salvage is
        writing the output (its pid is named), 77 wrong key or permissions (of the
        output too). Stopped by a signal, it ends by that signal.

        USAGE: cachetool salvage [--store <dir>] [--key-file <path>] --output <dir> [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          -o, --output <dir>      The new store's directory (new or empty, or an
                                  unfinished salvage's).
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let cap = """
        OVERVIEW: Show, set or remove the store's cap on the number of access tokens.

        The cap is kept in the store, so every process that writes to it enforces it. A
        write that adds an access token to a store at its cap evicts others: expired
        tokens first, then the least recently cached (chosen from a random sample of
        16, so the cost per write stays the same whatever the store's size). Refresh
        tokens, ID tokens, accounts and app metadata are never evicted: only an access
        token, which the next silent request gets again with the refresh token.

        Setting a cap below the number stored evicts the excess now, oldest first, in
        transactions of at most a few thousand removals: a cap command that is stopped
        or killed leaves a valid store, and running it again finishes the work. Works
        on a full store (it may use the room kept for removals).

        JSON keys: cap (null when none), access_tokens, evicted, transactions.

        Exit codes: 0 success, 64 usage, 65 damaged cap record, 66 store or key not
        found, 74 storage full or I/O error, 75 conflict (retry), 77 wrong key.

        USAGE: cachetool cap [--store <dir>] [--key-file <path>] [--access-tokens <count>] [--none] [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --access-tokens <count> Set the cap to this many access tokens (at least 1).
          --none                  Remove the cap.
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let purgeExpired = """
        OVERVIEW: Remove expired access tokens (and refresh tokens past their own
        expiry).

        Access tokens past their expiry are removed; refresh tokens stay unless they
        carry an expiry of their own that has passed (most carry none: only the server
        knows when they end). The work is done in transactions of at most a few
        thousand records, each committed on its own: other processes keep writing
        between them, and a purge that is stopped or killed leaves every remaining
        token intact; run it again to finish. Damaged records are left in place and
        listed on standard error (exit code 65).

        Works on a full store: removals may use room kept for them beyond the store's
        size limit, and at the limit the transactions get smaller.

        JSON keys: dry_run, access_tokens_removed, refresh_tokens_removed, examined,
        transactions, corrupt_records.

        Exit codes: 0 success, 64 usage, 65 damaged records (left in place and listed),
        66 store or key not found, 74 storage full or I/O error (the batches before
        stay removed), 75 conflict (run it again), 77 wrong key or permissions.

        USAGE: cachetool purge-expired [--store <dir>] [--key-file <path>] [--older-than <duration>] [--dry-run] [--json] [--now <seconds>]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --older-than <duration> Only tokens expired at least this long ago (90s, 15m,
                                  2h, 7d).
          --dry-run               Count what would be removed; remove nothing.
          --json                  Print JSON.
          --now <seconds>         Current time in Unix seconds (default: now).
          --version               Show the version.
          -h, --help              Show help information.

        """

    static let rekey = """
        OVERVIEW: Protect the store with a new key file or passphrase, or seal its
        records under a new data key.

        The store is opened with its current key (--key-file, $TOKEN_CACHE_KEY,
        $TOKEN_CACHE_PASSPHRASE, ...); its data keys are then sealed under the new root
        key in one transaction. No record is rewritten, so this takes milliseconds
        whatever the size of the store. A crash leaves the store opening with the old
        key or the new one, never neither. With the wrong current key nothing is
        written (exit 77).

        --new-key-file names the new key file: created (32 random bytes, mode 0600)
        when missing, and never the current key file. With --new-passphrase the new
        passphrase is read from $TOKEN_CACHE_NEW_PASSPHRASE. Programs that have the
        store open keep reading; they write again once reopened with the new key.

        --rotate-data-key keeps the root key and seals every record under a new data
        key instead (for a data key that may have leaked, or as routine): one
        transaction adds the key, then records are re-sealed about a thousand per
        transaction, the store readable throughout; the last transaction retires the
        older data keys (the first one stays: the blind index derives from it, though
        no record is sealed under it any more). A rotation that is stopped or killed
        loses nothing; run the command again to finish it. Programs that have the store
        open keep reading, and write again once reopened after the rotation. `cachetool
        verify` shows which data keys records use.

        With --cipher the new data key seals with another cipher: how a store moves
        between aes-256-gcm and xchacha20-poly1305 (before machines without AES-NI
        share it, say). Any writable open finishes a rotation that was stopped.

        JSON keys: directory, protection, key_file; with --rotate-data-key:
        active_key_id, cipher, resumed, resealed, damaged, retired_key_ids,
        transactions.

        Exit codes: 0 done, 64 usage, 65 damaged store, 66 store or key not found, 74
        storage full or I/O error (what committed stays), 75 another process changed
        the header meanwhile (run it again), 77 wrong key or permissions, 78 a cipher
        this machine cannot run.

        USAGE: cachetool rekey [--store <dir>] [--key-file <path>] [--new-key-file <path>] [--new-passphrase] [--rotate-data-key] [--cipher <cipher>] [--passphrase-cost <passphrase-cost>] [--json]

        OPTIONS:
          --store <dir>           Store directory.
          --key-file <path>       Key file (32 bytes, mode 0600).
          --new-key-file <path>   The new key file (created if missing).
          --new-passphrase        Protect the store with the passphrase in
                                  $TOKEN_CACHE_NEW_PASSPHRASE (Argon2id).
          --rotate-data-key       Keep the root key; seal every record under a new data
                                  key and retire the old ones.
          --cipher <cipher>       With --rotate-data-key: the cipher the new data key
                                  seals with, aes-256-gcm or xchacha20-poly1305
                                  (default: the store's). (values: aes-256-gcm,
                                  xchacha20-poly1305)
          --passphrase-cost <passphrase-cost>
                                  Argon2id cost for --new-passphrase: interactive,
                                  moderate or sensitive. (values: interactive,
                                  moderate, sensitive; default: interactive)
          --json                  Print JSON.
          --version               Show the version.
          -h, --help              Show help information.

        """
}
