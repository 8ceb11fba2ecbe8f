import ArgumentParser
import Foundation
import TokenCache

/// `cachetool inspect`: the accounts and credentials of a store, secrets redacted, as a table that fits the
/// terminal, as JSON, or as counts.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List accounts and credentials, secrets redacted.",
        usage: """
            cachetool inspect [--store <dir>] [--key-file <path>] [--output table|wide|json] [--summary] [--limit <N>]
                              [--kind <kind>] [--expired] [--expiring-within <duration>] [--account <account> | --username <username>]
                              [--client-id <client-id>] [--environment <host>] [--color <when>] [--include-secrets] [--now <seconds>]
            """,
        discussion: """
            The table lists people first, by username (in storage order past 50,000 Account records): one line per \
            account (username, home tenant, profiles, clients, next expiry), then that account's credentials under it; \
            then tokens of home accounts without an Account record, then app metadata. Columns fit the terminal (identifiers are cut in the middle); --output wide shows \
            every value in full. On a terminal, expired tokens are red, tokens due for refresh yellow and family \
            tokens magenta; never when piped, with NO_COLOR set, or with --color never.

            Records are printed as they are read, so memory stays small whatever the size of the store. --json \
            writes one object: store, now, an array per kind (MSAL field names as `export` writes them, absent \
            fields omitted, plus revision and fingerprint), corrupt_records; with --limit also limit and truncated. \
            Filters combine (all must match). Damaged records are never shown; they are listed by fingerprint after \
            the output (exit code 65). Tokens are shown only with --include-secrets.
            """
    )

    enum OutputFormat: String, CaseIterable, ExpressibleByArgument {
        case table, wide, json
    }

    @OptionGroup var options: StoreOptions

    // No `-o`: `export -o` names a file, and one letter should not mean two things in one tool.
    @Option(help: ArgumentHelp("Output format.", valueName: "format"))
    var output: OutputFormat?

    @Flag(help: "Print JSON for scripts (same as --output json).")
    var json = false

    @Flag(help: "Show every value in full, with environment and fingerprint columns (same as --output wide).")
    var wide = false

    @Flag(help: "Print counts per kind and expiry state instead of the records.")
    var summary = false

    @Option(help: ArgumentHelp("Colour on a terminal.", valueName: "when"))
    var color: ColorChoice = .auto

    @Flag(name: .customLong("include-secrets"), help: "Show token secrets instead of the redaction marker.")
    var includeSecrets = false

    /// The flag's earlier name: `export` says `--include-secrets` for the same idea, so that is the name shown; this
    /// one keeps working for the scripts that use it.
    @Flag(name: .customLong("reveal-secrets"), help: .hidden)
    var revealSecretsAlias = false

    var revealSecrets: Bool { includeSecrets || revealSecretsAlias }

    @Option(name: .customLong("account"), help: ArgumentHelp("Only this account: its home account id, or its username.", valueName: "account"))
    var account: String?

    @Option(help: ArgumentHelp("Only accounts with this username (case-insensitive; all of them if several).", valueName: "username"))
    var username: String?

    @Option(name: .customLong("client-id"), help: ArgumentHelp("Only this client id.", valueName: "client-id"))
    var clientID: String?

    @Option(help: ArgumentHelp("Only records in this host's cloud (its alias group).", valueName: "host"))
    var environment: String?

    @Option(
        help: ArgumentHelp(
            "Only these kinds: account, access-token, refresh-token, id-token, app-metadata (repeat or separate with commas).",
            valueName: "kind"
        )
    )
    var kind: [String] = []

    @Flag(help: "Only tokens past their expiry.")
    var expired = false

    // Unconditional: a value such as `-5d` is this option's (and refused as negative), not an unknown option.
    @Option(parsing: .unconditional, help: ArgumentHelp("Only tokens that expire within this time (90s, 15m, 2h, 7d).", valueName: "duration"))
    var expiringWithin: String?

    @Option(help: ArgumentHelp("Show at most this many records.", valueName: "N"))
    var limit: Int?

    @Option(help: ArgumentHelp("Current time in Unix seconds, for relative expiry (default: now).", valueName: "seconds"))
    var now: Int64?

    var format: OutputFormat {
        output ?? (json ? .json : wide ? .wide : .table)
    }

    func validate() throws {
        let chosen = [output != nil, json, wide].filter { $0 }.count
        if chosen > 1 && !(output == .json && json) && !(output == .wide && wide) {
            throw ValidationError("--output, --json and --wide each choose the output format: give one of them")
        }
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1, not \(limit)") }
        if summary && revealSecrets { throw ValidationError("--summary shows no records, so --include-secrets has nothing to show") }
        if account != nil && username != nil { throw ValidationError("--account and --username both choose the account: give one of them") }
        _ = try selection()
    }

    /// The kinds, expiry window and cloud the options ask for.
    func selection() throws -> InspectSelection {
        var selection = InspectSelection()
        if !kind.isEmpty { selection.kinds = try Arguments.entityKinds(kind, option: "--kind") }
        selection.expired = expired
        selection.expiringWithin = try expiringWithin.map { try Arguments.duration($0, option: "--expiring-within") }
        selection.environment = environment
        if selection.selectsByExpiry {
            selection.kinds.formIntersection([.accessToken, .refreshToken])
            if selection.kinds.isEmpty {
                throw ValidationError("--expired and --expiring-within select tokens; --kind \(kind.joined(separator: ",")) has none")
            }
        }
        return selection
    }

    func run() throws {
        try CrashContainment.delegate(storeDirectory: options.configuration(readOnly: true).directory)
        var corrupt: [CorruptRecord] = []
        do {
            try Failure.reporting { corrupt = try inspect() }
        } catch is StreamOutput.Closed {
            return
        } catch let failure as StreamOutput.WriteFailed {
            Output.error(failure.message)
            throw ExitCode(74)
        }
        try DamagedRecords.report(corrupt)
    }

    /// Reads and prints; returns the damaged records met.
    private func inspect() throws -> [CorruptRecord] {
        let cache = try TokenStore.open(options.configuration(readOnly: true))
        let homeAccountID = try account.map { try Arguments.homeAccountID($0, in: cache) }
        let now = self.now ?? Int64(Date().timeIntervalSince1970)
        let selection = try self.selection()
        let filter = RecordFilter(homeAccountID: homeAccountID, clientID: clientID)
        let info = try cache.info()
        let records = info.recordCounts.values.reduce(0, +)
        let progressBar = ProgressBar(label: "reading", unit: "records", delay: 1.0)
        let output = StreamOutput(progress: progressBar)
        defer { progressBar?.finish() }
        func progress(_ done: Int) { progressBar?.update(done: done, total: records) }
        let store = JSONValue.object([
            "directory": .string(info.directory),
            "store_id": .string(info.storeID),
            "format_read_version": .integer(Int64(info.readVersion)),
            "format_write_version": .integer(Int64(info.writeVersion)),
        ])
        return try cache.read { reader in
            var visited = 0
            // One record read: progress, and now and then the store's pages let go.
            func visitedOne() {
                visited += 1
                progress(visited)
                if visited % InspectTable.recordsPerPageRelease == 0 { reader.releaseScannedPages() }
            }
            let partitions = try username.map { try Self.partitions(username: $0, reader: reader) }
            if summary {
                var summary = InspectSummary(filter: filter, selection: selection, partitions: partitions, now: now)
                try summary.collect(reader: reader, visited: visitedOne)
                if format == .json {
                    try output.line(summary.json(store: store).prettyPrinted())
                } else {
                    try output.line(heading(info, records: records, width: TerminalWidth.current()))
                    try output.line("")
                    for line in summary.lines(style: TextStyle.resolve(color)) { try output.line(line) }
                }
                try output.flush()
                return summary.corrupt
            }
            switch format {
            case .json:
                var view = InspectJSON(
                    filter: filter, selection: selection, partitions: partitions, revealSecrets: revealSecrets, limit: limit, now: now
                )
                try view.render(reader: reader, store: store, output: output, visited: visitedOne)
                return view.corrupt
            case .table, .wide:
                let style = TextStyle.resolve(color)
                let width = format == .wide ? nil : TerminalWidth.current()
                let table = InspectTable(
                    settings: InspectTable.Settings(
                        filter: filter, selection: selection, partitions: partitions, wide: format == .wide, revealSecrets: revealSecrets,
                        limit: limit, now: now, style: style, width: width
                    ),
                    output: output, visited: visitedOne
                )
                if records == 0 {
                    try output.line(heading(info, records: records, width: width) + "\n(empty)")
                    try output.flush()
                    return []
                }
                try table.render(reader: reader, heading: heading(info, records: records, width: width))
                if table.shown == 0 {
                    try output.line("(no record matches)")
                } else if table.truncated {
                    try output.line("")
                    try output.line(style.paint("(the first \(ProgressBar.grouped(table.shown)) matching records: --limit \(limit ?? 0); more match)", .dim))
                }
                if !table.corrupt.isEmpty {
                    try output.line("")
                    try output.line(style.paint("(\(InspectTable.plural(table.corrupt.count, "damaged record")) not shown: listed on standard error)", .red))
                }
                try output.flush()
                return table.corrupt
            }
        }
    }

    /// `Store <directory> (format v2, 1,234 records)`, escaped, and cut in the middle of the path when the terminal is
    /// narrower.
    private func heading(_ info: StoreInfo, records: Int, width: Int?) -> String {
        var text = "Store \(info.directory) (format v\(info.readVersion), \(ProgressBar.grouped(records)) record\(records == 1 ? "" : "s"))"
        if info.readOnly && !info.formatWritable { text += ", read-only" }
        text = Terminal.sanitize(text)
        return width.map { DisplayWidth.truncated(text, to: $0, cut: .middle) } ?? text
    }

    /// The partitions of the accounts named `username`: `--username` shows all of them, none being no error.
    static func partitions(username: String, reader: CacheReader) throws -> [HomeAccountPartition] {
        var found: Set<HomeAccountPartition> = []
        var read = 0
        try reader.forEach(Account.self) { result in
            read += 1
            if read % InspectTable.recordsPerPageRelease == 0 { reader.releaseScannedPages() }
            if case .success(let stored) = result, let name = stored.entity.username, name.lowercased() == username.lowercased(),
                let partition = reader.partition(of: stored)
            {
                found.insert(partition)
            }
            return true
        }
        return found.sorted()
    }
}
