import ArgumentParser
import Foundation
import TokenCache
import TokenCacheOperations

/// `cachetool purge-expired`: removes expired tokens in small transactions.
struct PurgeExpired: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge-expired",
        abstract: "Remove expired access tokens (and refresh tokens past their own expiry).",
        discussion: """
            Access tokens past their expiry are removed; refresh tokens stay unless they carry an expiry of their \
            own that has passed (most carry none: only the server knows when they end). The work is done in \
            transactions of at most a few thousand records, each committed on its own: other processes keep \
            writing between them, and a purge that is stopped or killed leaves every remaining token intact; run it \
            again to finish. Damaged records are left in place and listed on standard error (exit code 65).

            Works on a full store: removals may use room kept for them beyond the store's size limit, and at the \
            limit the transactions get smaller.

            JSON keys: dry_run, access_tokens_removed, refresh_tokens_removed, examined, transactions, corrupt_records.

            Exit codes: 0 success, 64 usage, 65 damaged records (left in place and listed), 66 store or key not \
            found, 74 storage full or I/O error (the batches before stay removed), 75 conflict (run it again), 77 \
            wrong key or permissions.
            """
    )

    @OptionGroup var options: StoreOptions

    // Unconditional: a value such as `-5d` is this option's (and refused as negative), not an unknown option.
    @Option(parsing: .unconditional, help: ArgumentHelp("Only tokens expired at least this long ago (90s, 15m, 2h, 7d).", valueName: "duration"))
    var olderThan: String?

    @Flag(help: "Count what would be removed; remove nothing.")
    var dryRun = false

    @Flag(help: "Print JSON.")
    var json = false

    @Option(help: ArgumentHelp("Current time in Unix seconds (default: now).", valueName: "seconds"))
    var now: Int64?

    func validate() throws {
        _ = try olderThan.map { try Arguments.duration($0, option: "--older-than") }
    }

    func run() throws {
        let olderThan = try self.olderThan.map { try Arguments.duration($0, option: "--older-than") } ?? 0
        var corrupt: [CorruptRecord] = []
        try Failure.reporting {
            let cache = try TokenStore.open(options.configuration(readOnly: dryRun))
            let counts = try cache.info().recordCounts
            let total = (counts[.accessToken] ?? 0) + (counts[.refreshToken] ?? 0)
            let bar = ProgressBar(label: dryRun ? "examining" : "purging", unit: "tokens", delay: 1.0)
            let report = try cache.purgeExpired(olderThan: olderThan, now: now, dryRun: dryRun) { bar?.update(done: $0.examined, total: total) }
            bar?.finish()
            corrupt = report.corrupt
            if json {
                print(
                    JSONValue.object([
                        "dry_run": .bool(report.dryRun), "access_tokens_removed": .integer(Int64(report.accessTokensRemoved)),
                        "refresh_tokens_removed": .integer(Int64(report.refreshTokensRemoved)), "examined": .integer(Int64(report.examined)),
                        "transactions": .integer(Int64(report.transactions)), "corrupt_records": DamagedRecords.json(report.corrupt),
                    ]).prettyPrinted()
                )
            } else {
                let tokens = "\(InspectTable.plural(report.accessTokensRemoved, "access token")) and "
                    + InspectTable.plural(report.refreshTokensRemoved, "refresh token")
                if dryRun {
                    print("would remove \(tokens) (of \(ProgressBar.grouped(report.examined)) examined); nothing was removed")
                } else {
                    print("removed \(tokens) (of \(ProgressBar.grouped(report.examined)) examined) in \(InspectTable.plural(report.transactions, "transaction"))")
                }
            }
        }
        try DamagedRecords.report(corrupt)
    }
}
