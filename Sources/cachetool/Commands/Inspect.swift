import ArgumentParser
import Foundation
import TokenCache

/// `cachetool inspect`: every account and credential as a readable table (or JSON), secrets redacted.
struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List accounts and credentials, secrets redacted.",
        discussion: """
            Damaged records are never shown; they are listed by fingerprint after the table (exit code 65). \
            Tokens are shown only with --reveal-secrets.
            """
    )

    @OptionGroup var options: StoreOptions

    @Flag(help: "Print JSON (MSAL field names, integer times) for scripts.")
    var json = false

    @Flag(help: "Show token secrets instead of the redaction marker.")
    var revealSecrets = false

    @Option(name: .customLong("account"), help: ArgumentHelp("Only this account: its home account id, or its username.", valueName: "account"))
    var account: String?

    @Option(name: .customLong("client-id"), help: ArgumentHelp("Only this client id.", valueName: "client-id"))
    var clientID: String?

    @Option(help: ArgumentHelp("Current time in Unix seconds, for relative expiry (default: now).", valueName: "seconds"))
    var now: Int64?

    func run() throws {
        try CrashContainment.delegate(storeDirectory: options.configuration(readOnly: true).directory)
        var corrupt: [CorruptRecord] = []
        try Failure.reporting {
            let cache = try TokenStore.open(options.configuration(readOnly: true))
            let homeAccountID = try account.map { try Arguments.homeAccountID($0, in: cache) }
            let snapshot = try cache.snapshot(filter: RecordFilter(homeAccountID: homeAccountID, clientID: clientID))
            let info = try cache.info()
            let now = self.now ?? Int64(Date().timeIntervalSince1970)
            if json {
                print(InspectJSON.render(snapshot, info: info, revealSecrets: revealSecrets, now: now).prettyPrinted())
            } else {
                print(InspectTable.render(snapshot, info: info, revealSecrets: revealSecrets, now: now))
            }
            corrupt = snapshot.corrupt
        }
        try DamagedRecords.report(corrupt)
    }
}

/// The table view of a snapshot.
enum InspectTable {
    static func render(_ snapshot: CacheSnapshot, info: StoreInfo, revealSecrets: Bool, now: Int64) -> String {
        var usernames: [String: String] = [:]
        for account in snapshot.accounts {
            if let username = account.entity.username, !username.isEmpty {
                usernames[account.entity.homeAccountID.lowercased()] = username
            }
        }
        func accountLabel(_ homeAccountID: String) -> String {
            if homeAccountID.isEmpty { return "(app)" }
            return usernames[homeAccountID.lowercased()] ?? homeAccountID
        }
        func secret(_ value: Secret) -> [String] { revealSecrets ? [value.reveal()] : [] }

        var headers = ["KIND", "ACCOUNT", "ENVIRONMENT", "REALM", "CLIENT", "SCOPES", "EXPIRES"]
        if revealSecrets { headers.append("SECRET") }
        // Rows group by account (app-wide rows last), then kind in the order of the MSAL schema.
        var rows: [[String]] = []
        for stored in snapshot.accounts {
            let account = stored.entity
            rows.append(
                ["Account", account.username.flatMap { $0.isEmpty ? nil : $0 } ?? account.homeAccountID, account.environment,
                 account.realm, "-", "-", "-"] + (revealSecrets ? ["-"] : [])
            )
        }
        for stored in snapshot.accessTokens {
            let token = stored.entity
            var expiry = RelativeTime.describe(token.expiresOn, now: now)
            if let refreshOn = token.refreshOn, refreshOn <= now, token.expiresOn > now { expiry += " (refresh due)" }
            var kind = "AccessToken"
            if let type = token.tokenType, type.lowercased() != "bearer" { kind += " (\(type))" }
            rows.append(
                [kind, accountLabel(token.homeAccountID), token.environment, token.realm, token.clientID, token.target, expiry]
                    + secret(token.secret)
            )
        }
        for stored in snapshot.refreshTokens {
            let token = stored.entity
            let client = token.familyID.map { "\(token.clientID) (family \($0))" } ?? token.clientID
            rows.append(
                ["RefreshToken", accountLabel(token.homeAccountID), token.environment, token.realm ?? "-", client,
                 token.target ?? "-", token.expiresOn.map { RelativeTime.describe($0, now: now) } ?? "-"] + secret(token.secret)
            )
        }
        for stored in snapshot.idTokens {
            let token = stored.entity
            rows.append(
                ["IdToken", accountLabel(token.homeAccountID), token.environment, token.realm, token.clientID, "-", "-"]
                    + secret(token.secret)
            )
        }
        for stored in snapshot.appMetadata {
            let metadata = stored.entity
            let client = metadata.familyID.map { "\(metadata.clientID) (family \($0))" } ?? metadata.clientID
            rows.append(["AppMetadata", "-", metadata.environment, "-", client, "-", "-"] + (revealSecrets ? ["-"] : []))
        }
        let kindOrder = ["Account": 0, "AccessToken": 1, "RefreshToken": 2, "IdToken": 3, "AppMetadata": 4]
        func sortKey(_ row: [String]) -> (Int, String, Int, String) {
            let kind = kindOrder[String(row[0].prefix { $0 != " " })] ?? 5
            return (row[1] == "-" ? 1 : 0, row[1], kind, row[2] + row[3] + row[4] + row[5])
        }
        var table = Table(headers: headers)
        for row in rows.sorted(by: { sortKey($0) < sortKey($1) }) { table.append(row) }
        let total = table.rows.count
        var header = "Store \(info.directory) (format v\(info.readVersion), \(total) record\(total == 1 ? "" : "s")"
        header += snapshot.corrupt.isEmpty ? ")" : ", \(snapshot.corrupt.count) corrupt)"
        if total == 0 { return Terminal.sanitize(header) + "\n(empty)" }
        return Terminal.sanitize(header) + "\n" + table.render()
    }
}

/// The JSON view of a snapshot: stable keys, MSAL field names, integer times.
enum InspectJSON {
    static func render(_ snapshot: CacheSnapshot, info: StoreInfo, revealSecrets: Bool, now: Int64) -> JSONValue {
        func records<E: CacheEntity>(_ list: [StoredEntity<E>]) -> JSONValue {
            .array(
                list.map { stored in
                    var object = stored.entity.jsonObject(revealSecrets: revealSecrets)
                    object["revision"] = .integer(Int64(stored.revision))
                    object["fingerprint"] = .string(stored.fingerprint)
                    return .object(object)
                }
            )
        }
        return .object([
            "store": .object([
                "directory": .string(info.directory),
                "store_id": .string(info.storeID),
                "format_read_version": .integer(Int64(info.readVersion)),
                "format_write_version": .integer(Int64(info.writeVersion)),
            ]),
            "now": .integer(now),
            "accounts": records(snapshot.accounts),
            "access_tokens": records(snapshot.accessTokens),
            "refresh_tokens": records(snapshot.refreshTokens),
            "id_tokens": records(snapshot.idTokens),
            "app_metadata": records(snapshot.appMetadata),
            "corrupt_records": DamagedRecords.json(snapshot.corrupt),
        ])
    }
}
