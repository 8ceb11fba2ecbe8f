import ArgumentParser
import TokenCache

/// `cachetool accounts`: the signed-in users, one per home account with its tenant profiles.
struct Accounts: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List signed-in accounts with their tenant profiles.",
        discussion: """
            Without --client-id every account is listed; with it, only those the client can use silently (a refresh \
            token of the client, or of its family). JSON: {"accounts": [{home_account_id, username, profiles: \
            [{environment, realm, username, local_account_id, authority_type}]}]}.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(name: .customLong("client-id"), help: "Only accounts this client can use silently.")
    var clientID: String?

    @Option(help: "Only profiles in this host's cloud (alias group).")
    var environment: String?

    @Option(help: "Only accounts with this username (case-insensitive).")
    var username: String?

    @Flag(help: "Print JSON.")
    var json = false

    func run() throws {
        var corrupt: [CorruptRecord] = []
        try Failure.reporting {
            let listing = try TokenStore.open(options.configuration(readOnly: true)).accounts(clientID: clientID, environment: environment, username: username)
            if json {
                print(
                    JSONValue.object([
                        "accounts": .array(
                            listing.accounts.map { summary in
                                .object([
                                    "home_account_id": .string(summary.homeAccountID),
                                    "username": summary.username.map { .string($0) } ?? .null,
                                    "profiles": .array(
                                        summary.profiles.map { stored in
                                            let account = stored.entity
                                            return .object([
                                                "environment": .string(account.environment), "realm": .string(account.realm),
                                                "username": account.username.map { .string($0) } ?? .null,
                                                "local_account_id": account.localAccountID.map { .string($0) } ?? .null,
                                                "authority_type": .string(account.authorityType),
                                            ])
                                        }
                                    ),
                                ])
                            }
                        ),
                        "corrupt_records": DamagedRecords.json(listing.corrupt),
                    ]).prettyPrinted()
                )
            } else if listing.accounts.isEmpty {
                print("(no accounts)")
            } else {
                // Fitted to the terminal: home account ids are cut in the middle, as `inspect` cuts identifiers.
                var table = Table(headers: ["HOME ACCOUNT", "USERNAME", "ENVIRONMENT", "REALMS"], cuts: [.middle, .end, .end, .middle])
                for summary in listing.accounts {
                    table.append([
                        summary.homeAccountID, summary.username ?? "-",
                        Array(Set(summary.profiles.map(\.entity.environment))).sorted().joined(separator: ","),
                        summary.profiles.map(\.entity.realm).joined(separator: ","),
                    ])
                }
                print(table.render(width: TerminalWidth.current()))
            }
            corrupt = listing.corrupt
        }
        try DamagedRecords.report(corrupt)
    }
}

/// `cachetool remove-account`: sign an account out of one client, or everywhere.
struct RemoveAccount: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove-account",
        abstract: "Sign an account out: for one client (--client-id) or for every client (--all-clients). App metadata stays.",
        discussion: """
            With --on-behalf-of or --assertion-file instead of --account, signs one on-behalf-of partition out: the \
            access and refresh tokens a web API holds for that caller; the account's own tokens and profile stay.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(name: .customLong("account"), help: ArgumentHelp("The home account id, or the account's username.", valueName: "account"))
    var account: String?

    @OptionGroup var onBehalfOf: OnBehalfOfOptions

    @Option(name: .customLong("client-id"), help: "Remove what this client holds (and the family refresh token if it is a member).")
    var clientID: String?

    @Flag(name: .customLong("all-clients"), help: "Remove the account's credentials of every client.")
    var allClients = false

    @Option(help: "Only in this host's cloud (alias group).")
    var environment: String?

    @Flag(help: "Print JSON.")
    var json = false

    func validate() throws {
        if (clientID == nil) == !allClients { throw ValidationError("give exactly one of --client-id and --all-clients") }
        if onBehalfOf.isGiven {
            if account != nil { throw ValidationError("--account cannot be combined with an on-behalf-of partition") }
            if environment != nil { throw ValidationError("--environment cannot be combined with an on-behalf-of partition") }
        } else if account == nil {
            throw ValidationError("give --account, or an on-behalf-of partition (--on-behalf-of or --assertion-file)")
        }
    }

    func run() throws {
        try Failure.reporting {
            let cache = try TokenStore.open(options.configuration(readOnly: false))
            let removed: RemovalSummary
            if let partition = try onBehalfOf.partition() {
                removed = try cache.removeOnBehalfOf(partition, clientID: clientID)
            } else {
                removed = try cache.removeAccount(
                    homeAccountID: try Arguments.homeAccountID(account!, in: cache), clientID: clientID, environment: environment
                )
            }
            if json {
                print(
                    JSONValue.object([
                        "access_tokens": .integer(Int64(removed.accessTokens)), "refresh_tokens": .integer(Int64(removed.refreshTokens)),
                        "id_tokens": .integer(Int64(removed.idTokens)), "accounts": .integer(Int64(removed.accounts)),
                        "damaged_records": .array(removed.damagedRecords.map {
                            .object(["kind": .string($0.kind.rawValue), "fingerprint": .string($0.fingerprint)])
                        }),
                    ]).prettyPrinted()
                )
            } else {
                print(
                    "Removed \(removed.accessTokens) access token(s), \(removed.refreshTokens) refresh token(s), "
                        + "\(removed.idTokens) ID token(s) and \(removed.accounts) account record(s)."
                )
            }
            for record in removed.damagedRecords {
                Output.warning("also removed a damaged \(record.kind.rawValue) record of this account (\(record.fingerprint)): it could not be opened")
            }
        }
    }
}
