import ArgumentParser
import Foundation
import TokenCache
import TokenCacheOperations

/// `cachetool stats`: an operator's numbers about a store: records, token states, who uses it, how it is laid out.
struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Count what a store holds and how it is laid out, for operators.",
        discussion: """
            Records per kind; access tokens valid, refresh due (their refresh_on passed, or under 5 min left: of \
            those, a silent lookup no longer returns the ones under 5 min) and expired, as inspect --summary counts \
            them; home accounts (app-only tokens, of a client acting as itself, are counted apart), the ten largest, \
            and every client, each by a keyed fingerprint (the identifiers \
            too with --reveal-identifiers); the oldest and newest write; the map's size and use; per database the \
            entries, B-tree depth and pages; the reader slots in use and stale ones (of processes that are gone); \
            the files' sizes. Reads every record once, in bounded memory. Damaged records are counted and listed \
            by fingerprint on standard error (exit code 65).

            JSON keys: records, access_tokens {valid, refresh_due, expiring_soon (of refresh_due, under 5 min \
            left), expired, cap}, refresh_tokens_expired, home_accounts, app_only_tokens, largest_accounts [{fingerprint, home_account_id?, records, access_tokens}], clients \
            [{fingerprint, client_id?, access_tokens, refresh_tokens, id_tokens, app_metadata}], clients_truncated, \
            oldest_write, newest_write, storage {page_size, map_size, maximum_map_size, used_bytes, databases [...], \
            readers {max, in_use, stale, slots [...]}, files {...}}, corrupt_records. Times are Unix seconds.

            Exit codes: 0 success, 64 usage, 65 damaged records (counted and listed) or a damaged store, 66 store or \
            key not found, 74 I/O error, 77 wrong key or permissions.
            """
    )

    @OptionGroup var options: StoreOptions

    @Flag(help: "Print JSON.")
    var json = false

    @Flag(help: "Show home account ids and client ids beside their fingerprints.")
    var revealIdentifiers = false

    @Option(help: ArgumentHelp("Current time in Unix seconds, for expiry and ages (default: now).", valueName: "seconds"))
    var now: Int64?

    func run() throws {
        try CrashContainment.delegate(storeDirectory: options.configuration(readOnly: true).directory)
        var corrupt: [CorruptRecord] = []
        try Failure.reporting {
            let cache = try TokenStore.open(options.configuration(readOnly: true))
            let info = try cache.info()
            let now = self.now ?? Int64(Date().timeIntervalSince1970)
            let total = info.recordCounts.values.reduce(0, +)
            let bar = ProgressBar(label: "reading", unit: "records", delay: 1.0)
            let statistics = try cache.statistics(now: now) { bar?.update(done: $0, total: total) }
            bar?.finish()
            corrupt = statistics.corrupt
            print(json ? Self.json(statistics, revealIdentifiers: revealIdentifiers).prettyPrinted() : describe(statistics, info: info, now: now))
        }
        try DamagedRecords.report(corrupt)
    }

    static func json(_ statistics: StoreStatistics, revealIdentifiers: Bool) -> JSONValue {
        func integer(_ value: Int) -> JSONValue { .integer(Int64(value)) }
        var records: [String: JSONValue] = [:]
        for kind in EntityKind.allCases { records[kind.rawValue] = integer(statistics.records[kind] ?? 0) }
        let storage = statistics.storage
        return .object([
            "records": .object(records),
            "access_tokens": .object([
                "valid": integer(statistics.accessTokensValid), "refresh_due": integer(statistics.accessTokensRefreshDue),
                "expiring_soon": integer(statistics.accessTokensExpiringSoon),
                "expired": integer(statistics.accessTokensExpired),
                "cap": statistics.accessTokenCap.map(integer) ?? .null,
            ]),
            "refresh_tokens_expired": integer(statistics.refreshTokensExpired),
            "home_accounts": integer(statistics.homeAccounts),
            "app_only_tokens": integer(statistics.appOnlyRecords),
            "largest_accounts": .array(statistics.largestAccounts.map { account in
                var object: [String: JSONValue] = [
                    "fingerprint": .string(account.fingerprint), "records": integer(account.records), "access_tokens": integer(account.accessTokens),
                ]
                if revealIdentifiers { object["home_account_id"] = .string(account.homeAccountID) }
                return .object(object)
            }),
            "clients": .array(statistics.clients.map { client in
                var object: [String: JSONValue] = [
                    "fingerprint": .string(client.fingerprint), "access_tokens": integer(client.accessTokens),
                    "refresh_tokens": integer(client.refreshTokens), "id_tokens": integer(client.idTokens), "app_metadata": integer(client.appMetadata),
                ]
                if revealIdentifiers { object["client_id"] = .string(client.clientID) }
                return .object(object)
            }),
            "clients_truncated": .bool(statistics.clientsTruncated),
            "oldest_write": statistics.oldestWrite.map { .integer($0) } ?? .null,
            "newest_write": statistics.newestWrite.map { .integer($0) } ?? .null,
            "storage": .object([
                "page_size": integer(storage.pageSize), "map_size": integer(storage.mapSize), "maximum_map_size": integer(storage.maximumMapSize),
                "used_bytes": integer(storage.usedBytes),
                "databases": .array(storage.databases.map { database in
                    .object([
                        "name": .string(database.name), "entries": integer(database.entries), "depth": integer(database.depth),
                        "branch_pages": integer(database.branchPages), "leaf_pages": integer(database.leafPages),
                        "overflow_pages": integer(database.overflowPages),
                    ])
                }),
                "readers": .object([
                    "max": integer(storage.maxReaders), "in_use": integer(storage.readersInUse), "stale": integer(storage.staleReaders),
                    "slots": .array(storage.readers.map { reader in
                        .object(["pid": .integer(Int64(reader.pid)), "reading": .bool(reader.reading), "stale": .bool(reader.isStale)])
                    }),
                ]),
                "files": .object(storage.files.mapValues { integer($0) }),
            ]),
            "corrupt_records": DamagedRecords.json(statistics.corrupt),
        ])
    }

    /// The human view: short sections of aligned lines, fitted to `width` terminal columns when given: prose breaks
    /// between words, under its label; tables share the width by what their columns hold.
    func describe(_ statistics: StoreStatistics, info: StoreInfo, now: Int64, width: Int? = TerminalWidth.current()) -> String {
        let grouped = ProgressBar.grouped
        var lines = [Terminal.sanitize("Store \(info.directory) (format v\(info.readVersion))"), ""]
        let total = statistics.records.values.reduce(0, +)
        let kinds = EntityKind.allCases.map { "\($0) \(grouped(statistics.records[$0] ?? 0))" }.joined(separator: " · ")
        lines.append("records        \(grouped(total)): \(kinds)")
        lines.append(
            "access tokens  "
                + StoreCountLabels.tokenStates(
                    valid: statistics.accessTokensValid, refreshDue: statistics.accessTokensRefreshDue, expired: statistics.accessTokensExpired
                )
                + (statistics.accessTokenCap.map { " · cap \(grouped($0))" } ?? "")
        )
        if statistics.accessTokensExpiringSoon > 0 {
            lines.append("               of those due, \(grouped(statistics.accessTokensExpiringSoon)) with under 5 min left: a lookup no longer returns them")
        }
        if statistics.refreshTokensExpired > 0 {
            lines.append("refresh tokens \(grouped(statistics.refreshTokensExpired)) past their own expiry")
        }
        if let oldest = statistics.oldestWrite, let newest = statistics.newestWrite {
            lines.append("writes         oldest \(Self.age(oldest, now: now)) · newest \(Self.age(newest, now: now))")
        }
        lines.append("")
        lines.append(
            StoreCountLabels.owners(
                homeAccounts: statistics.homeAccounts, appOnlyRecords: statistics.appOnlyRecords, clients: statistics.clients.count,
                more: statistics.clientsTruncated
            ) + "; the largest home accounts:"
        )
        var table = Table(headers: ["  ACCOUNT", "RECORDS", "ACCESS TOKENS"] + (revealIdentifiers ? ["HOME ACCOUNT ID"] : []), cuts: [.middle, .end, .end, .middle])
        for account in statistics.largestAccounts {
            table.append(["  " + account.fingerprint, grouped(account.records), grouped(account.accessTokens)] + (revealIdentifiers ? [account.homeAccountID] : []))
        }
        lines.append(table.render(width: width))
        lines.append("")
        lines.append(InspectTable.plural(statistics.clients.count, "client") + (statistics.clientsTruncated ? " (and more, not counted)" : "") + ":")
        var clients = Table(headers: ["  CLIENT", "ACCESS", "REFRESH", "ID", "APP"] + (revealIdentifiers ? ["CLIENT ID"] : []), cuts: [.middle, .end, .end, .end, .end, .middle])
        for client in statistics.clients {
            clients.append(
                ["  " + client.fingerprint, grouped(client.accessTokens), grouped(client.refreshTokens), grouped(client.idTokens), grouped(client.appMetadata)]
                    + (revealIdentifiers ? [client.clientID] : [])
            )
        }
        lines.append(clients.render(width: width))
        let storage = statistics.storage
        lines.append("")
        if storage.mapSize > 0 {
            let share = Double(storage.usedBytes) * 100 / Double(storage.mapSize)
            lines.append(
                "map            \(Info.bytes(storage.usedBytes)) used of \(Info.bytes(storage.mapSize)) (\(String(format: "%.0f", share)) %), "
                    + "grows up to \(Info.bytes(storage.maximumMapSize)); pages of \(grouped(storage.pageSize)) bytes"
            )
        }
        lines.append("readers        " + StoreCountLabels.readers(storage))
        if !storage.files.isEmpty {
            lines.append("files          " + storage.files.keys.sorted().map { "\($0) \(Info.bytes(storage.files[$0]!))" }.joined(separator: " · "))
        }
        lines.append("")
        var databases = Table(headers: ["DATABASE", "ENTRIES", "DEPTH", "BRANCH", "LEAF", "OVERFLOW"])
        for database in storage.databases {
            databases.append([
                database.name, grouped(database.entries), "\(database.depth)", grouped(database.branchPages), grouped(database.leafPages),
                grouped(database.overflowPages),
            ])
        }
        lines.append(databases.render(width: width))
        // Prose under its 15-column label; the heading and the tables (already fitted) as they are.
        let fitted = lines.enumerated().flatMap { index, line in
            index == 0 || line.contains("\n") ? [line] : TextWrap.wrap(line, width: width, indent: 15)
        }
        return fitted.joined(separator: "\n")
    }

    /// "3 d ago", "in 2 min" (a write time ahead of now means a writer's clock is ahead).
    static func age(_ time: Int64, now: Int64) -> String {
        time <= now ? RelativeTime.span(UInt64(bitPattern: now &- time)) + " ago" : "in " + RelativeTime.span(UInt64(bitPattern: time &- now))
    }
}
