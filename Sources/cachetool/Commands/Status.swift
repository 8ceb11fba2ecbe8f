import ArgumentParser
import Foundation
import TokenCache
import TokenCacheOperations
import TokenCachePostgreSQL

/// `cachetool status`: the store's live state, for an operator on call, where `info` shows what the store is.
///
/// Named `status` as `git status`, `systemctl status` and `pg_ctl status` are: what is going on now. It works on both
/// kinds of store and shows for each what exists there: a shared store's server, tables, sessions, change listeners,
/// notification queue and clock; a directory's reader slots and map; for both, the refresh leases held and the
/// records. The server's part needs no key, so that a store this build or this key cannot open still shows why; the
/// leases need the key (they are sealed). Output names no token, user or account, and no password.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the store's live state: server, sessions, listeners, leases held, clock.",
        discussion: """
            On a shared store: the server and the version of the store's tables (and whether this build knows \
            it), rows per key space, the size of the table, its indexes and TOAST, the other sessions of the \
            store's hosts and the change listeners among them (sessions under the application_name \
            'token-cache listener <schema>'), the notification queue's use, and the server's clock against this \
            host's. On a directory: its size and reader slots. On both: the refresh leases held now (how many, \
            how long ago the oldest was taken) and the records per kind. Every wait on a server is bounded by \
            TOKEN_CACHE_STORE_TIMEOUT.

            Exit codes: 0 the store is usable by this build with this key; otherwise what was found is shown \
            and the exit code says why not: 66 no store (or key), 69 server unavailable, 77 wrong key, 78 tables \
            of a version this build does not know.
            """
    )

    @OptionGroup var options: StoreOptions

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        try Failure.reporting {
            let configuration = options.configuration(readOnly: true)
            if let server = try configuration.sharedStoreServerStatus() {
                try shared(server, configuration: configuration)
            } else {
                try local(configuration)
            }
        }
    }

    /// A shared store: the server's part first (no key needed), then the leases, which need the store open.
    private func shared(_ server: SharedStoreServerStatus, configuration: Configuration) throws {
        var leases: Result<RefreshLeaseCensus, TokenCacheError>? = nil
        if server.schemaVersion == nil {
            leases = .failure(TokenCacheError(.storeNotFound, "no token cache at \(server.location) (create one with `cachetool init --store …`)"))
        } else if !server.schemaIsKnown {
            leases = .failure(
                TokenCacheError(
                    .unsupportedFormatVersion,
                    "the store's tables are version \(server.schemaVersion ?? 0), and this build knows version \(server.knownSchemaVersion) only"
                        + ((server.schemaVersion ?? 0) < server.knownSchemaVersion ? ": bring them to it with `cachetool migrate`" : "")
                )
            )
        } else {
            leases = Self.census(configuration)
        }
        if json {
            var fields: [String: JSONValue] = [
                "kind": .string("postgresql"),
                "store": .string(server.location),
                "server_version": .string(server.serverVersion),
                "schema_version": server.schemaVersion.map { .integer(Int64($0)) } ?? .null,
                "known_schema_version": .integer(Int64(server.knownSchemaVersion)),
                "schema_known": .bool(server.schemaIsKnown),
                "rows": .object(server.rows.mapValues { .integer(Int64($0)) }),
                "lease_rows": .integer(Int64(server.leaseRows)),
                "table_bytes": .integer(Int64(server.tableBytes)),
                "index_bytes": .integer(Int64(server.indexBytes)),
                "toast_bytes": .integer(Int64(server.toastBytes)),
                "sessions": .integer(Int64(server.sessions)),
                "listeners": .integer(Int64(server.listeners)),
                "notification_queue_usage": .double(server.notificationQueueUsage),
                "server_time_ms": .integer(server.serverMilliseconds),
                "clock_skew_ms": .integer(server.clockSkewMilliseconds),
                "round_trip_ms": .integer(server.roundTripMilliseconds),
            ]
            fields["leases"] = Self.leasesJSON(leases)
            print(JSONValue.object(fields).prettyPrinted())
        } else {
            print(Self.describe(server, leases: leases))
        }
        if case .failure(let error) = leases { throw error }
    }

    private func local(_ configuration: Configuration) throws {
        let cache = try TokenStore.open(configuration)
        let info = try cache.info()
        let layout = try cache.storageLayout()
        let census = try cache.read { try $0.refreshLeaseCensus(now: Int64(Date().timeIntervalSince1970 * 1000)) }
        if json {
            print(
                JSONValue.object([
                    "kind": .string("directory"),
                    "store": .string(info.directory),
                    "used_bytes": .integer(Int64(info.usedBytes)),
                    "map_size": .integer(Int64(info.mapSize)),
                    "readers_in_use": .integer(Int64(layout.readersInUse)),
                    "max_readers": .integer(Int64(layout.maxReaders)),
                    "stale_readers": .integer(Int64(layout.staleReaders)),
                    "records": .counts(info.recordCounts),
                    "leases": Self.leasesJSON(.success(census)),
                ]).prettyPrinted()
            )
            return
        }
        var lines = [
            "store       \(Terminal.sanitize(info.directory))",
            "size        \(Info.bytes(info.usedBytes)) used of a \(Info.bytes(info.mapSize)) map",
            "readers     " + StoreCountLabels.readers(layout),
            "leases      " + Self.describe(census),
            "",
        ]
        var table = Table(headers: ["records", "count"])
        for kind in EntityKind.allCases { table.append([kind.rawValue, ProgressBar.grouped(info.recordCounts[kind] ?? 0)]) }
        lines.append(table.render())
        print(lines.joined(separator: "\n"))
    }

    /// The refresh leases of the shared store, or why they could not be read.
    static func census(_ configuration: Configuration) -> Result<RefreshLeaseCensus, TokenCacheError> {
        do {
            let cache = try TokenStore.open(configuration)
            return .success(try cache.read { try $0.refreshLeaseCensus(now: Int64(Date().timeIntervalSince1970 * 1000)) })
        } catch let error as TokenCacheError {
            return .failure(error)
        } catch {
            return .failure(TokenCacheError(.internalError, "reading the refresh leases failed"))
        }
    }

    static func leasesJSON(_ leases: Result<RefreshLeaseCensus, TokenCacheError>?) -> JSONValue {
        guard case .success(let census) = leases else { return .null }
        return .object([
            "held": .integer(Int64(census.held)),
            "oldest_held_age_seconds": census.oldestHeldAge.map { .integer($0) } ?? .null,
            "lapsed": .integer(Int64(census.lapsed)),
            "refusals": .integer(Int64(census.refusals)),
            "unreadable": .integer(Int64(census.unreadable)),
        ])
    }

    static func describe(_ census: RefreshLeaseCensus) -> String {
        var text = "\(census.held) held"
        if let age = census.oldestHeldAge { text += " (the oldest taken or renewed \(age) s ago)" }
        text += ", \(census.lapsed) lapsed, \(census.refusals) refused redemption\(census.refusals == 1 ? "" : "s")"
        if census.unreadable > 0 { text += ", \(census.unreadable) unreadable" }
        return text
    }

    /// The human view of a shared store.
    static func describe(_ server: SharedStoreServerStatus, leases: Result<RefreshLeaseCensus, TokenCacheError>?) -> String {
        let schema: String
        switch server.schemaVersion {
        case nil: schema = "holds no store (create one with `cachetool init`)"
        case let version? where server.schemaIsKnown: schema = "version \(version); this build reads and writes it"
        case let version? where version < server.knownSchemaVersion:
            schema = "version \(version); this build uses version \(server.knownSchemaVersion): run `cachetool migrate`"
        case let version?: schema = "version \(version); this build knows version \(server.knownSchemaVersion) only and will not use it"
        }
        let skew = server.clockSkewMilliseconds
        let clock =
            (skew == 0 ? "the server's clock agrees with this host's" : "the server's clock is \(abs(skew)) ms \(skew > 0 ? "ahead of" : "behind") this host's")
            + " (to within \(max(1, server.roundTripMilliseconds / 2)) ms)"
        var lines = [
            "store       \(Terminal.sanitize(server.location))",
            "server      PostgreSQL \(Terminal.sanitize(server.serverVersion))",
            "schema      \(schema)",
            "size        table \(Info.bytes(server.tableBytes)), indexes \(Info.bytes(server.indexBytes)), TOAST \(Info.bytes(server.toastBytes))",
            "sessions    \(server.sessions) other session\(server.sessions == 1 ? "" : "s") of the store's hosts; \(server.listeners) "
                + "change listener\(server.listeners == 1 ? "" : "s") connected",
            "queue       notification queue \(String(format: "%.1f", server.notificationQueueUsage * 100))% used",
            "clock       \(clock)",
        ]
        switch leases {
        case .success(let census)?: lines.append("leases      " + describe(census))
        case .failure(let error)?: lines.append("leases      not read: " + Terminal.sanitize(error.message))
        case nil: break
        }
        if !server.rows.isEmpty {
            lines.append("")
            var table = Table(headers: ["space", "rows"])
            var total = 0
            for name in server.rows.keys.sorted(by: Self.spaceOrder) {
                let count = server.rows[name] ?? 0
                total += count
                table.append([name, ProgressBar.grouped(count)])
                if name == "meta" { table.append(["  refresh leases", ProgressBar.grouped(server.leaseRows)]) }
            }
            table.append(["total", ProgressBar.grouped(total)])
            lines.append(table.render())
        }
        return lines.joined(separator: "\n")
    }

    /// FORMAT.md §3's order of the key spaces (an unknown one last).
    static func spaceOrder(_ a: String, _ b: String) -> Bool {
        let order = ["meta", "accounts", "access_tokens", "refresh_tokens", "id_tokens", "app_metadata"]
        return (order.firstIndex(of: a) ?? order.count, a) < (order.firstIndex(of: b) ?? order.count, b)
    }
}
