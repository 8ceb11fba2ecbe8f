import ArgumentParser
import Foundation
import TokenCache
import TokenCacheOperations

/// `cachetool cap`: shows, sets or removes the store's cap on access tokens.
struct Cap: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cap",
        abstract: "Show, set or remove the store's cap on the number of access tokens.",
        discussion: """
            The cap is kept in the store, so every process that writes to it enforces it. A write that adds an \
            access token to a store at its cap evicts others: expired tokens first, then the least recently cached \
            (chosen from a random sample of 16, so the cost per write stays the same whatever the store's size). \
            Refresh tokens, ID tokens, accounts and app metadata are never evicted: only an access token, which the \
            next silent request gets again with the refresh token.

            Setting a cap below the number stored evicts the excess now, oldest first, in transactions of at most a \
            few thousand removals: a cap command that is stopped or killed leaves a valid store, and running it \
            again finishes the work. Works on a full store (it may use the room kept for removals).

            JSON keys: cap (null when none), access_tokens, evicted, transactions.

            Exit codes: 0 success, 64 usage, 65 damaged cap record, 66 store or key not found, 74 storage full or \
            I/O error, 75 conflict (retry), 77 wrong key.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(help: ArgumentHelp("Set the cap to this many access tokens (at least 1).", valueName: "count"))
    var accessTokens: Int?

    @Flag(help: "Remove the cap.")
    var none = false

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        if none, accessTokens != nil { throw ValidationError("give either --access-tokens or --none, not both") }
        if let accessTokens, accessTokens < 1 { throw ValidationError("--access-tokens must be at least 1 (got \(accessTokens))") }
    }

    func run() throws {
        try Failure.reporting {
            let changing = none || accessTokens != nil
            let cache = try TokenStore.open(options.configuration(readOnly: !changing))
            let report: CapReport
            if changing {
                let stored = try cache.info().recordCounts[.accessToken] ?? 0
                let excess = max(stored - (accessTokens ?? stored), 0)
                let bar = excess > 0 ? ProgressBar(label: "evicting", unit: "access tokens", delay: 1.0) : nil
                report = try cache.setAccessTokenCap(none ? nil : accessTokens) { bar?.update(done: $0.evicted, total: excess) }
                bar?.finish()
            } else {
                report = CapReport(cap: try cache.accessTokenCap(), accessTokens: try cache.info().recordCounts[.accessToken] ?? 0)
            }
            if json {
                print(
                    JSONValue.object([
                        "cap": report.cap.map { .integer(Int64($0)) } ?? .null, "access_tokens": .integer(Int64(report.accessTokens)),
                        "evicted": .integer(Int64(report.evicted)), "transactions": .integer(Int64(report.transactions)),
                    ]).prettyPrinted()
                )
                return
            }
            let stored = InspectTable.plural(report.accessTokens, "access token")
            switch (report.cap, changing) {
            case (nil, false): print("no access-token cap (\(stored) stored)")
            case (nil, true): print("removed the access-token cap (\(stored) stored)")
            case (let cap?, false): print("access-token cap: \(ProgressBar.grouped(cap)) (\(stored) stored)")
            case (let cap?, true):
                let evicted = report.evicted > 0
                    ? "; evicted \(InspectTable.plural(report.evicted, "access token")) in \(InspectTable.plural(report.transactions - 1, "transaction"))" : ""
                print("access-token cap set to \(ProgressBar.grouped(cap))\(evicted) (\(stored) stored)")
            }
        }
    }
}
