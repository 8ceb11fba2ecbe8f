import ArgumentParser
import Foundation
import TokenCache

/// `cachetool lookup`: what a silent token request would get from the cache.
struct Lookup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Answer a silent token request: hit, refresh or interaction_required.",
        discussion: """
            JSON keys (stable): outcome, refresh_recommended, family_membership (member | not_member | unknown; \
            with unknown, do not delete a family refresh token whose redemption fails), access_token {secret, home_account_id, environment, \
            realm, client_id, target, token_type, key_id, ext_cache_key, user_assertion_hash, cached_at, expires_on, extended_expires_on, refresh_on}, \
            refresh_token {secret, home_account_id, environment, client_id, family_id}, id_token {secret, realm, \
            claims}, account {home_account_id, environment, realm, username, local_account_id, authority_type}; \
            absent objects and fields are null, times are integers (Unix seconds); corrupt_records [{kind, fingerprint, reason}] \
            lists damaged records the lookup had to skip. An --account username that no account has answers \
            interaction_required (a note on standard error says so).

            Exit codes: 0 for every outcome; with --exit-code, 0 for hit, 10 for refresh and 11 for \
            interaction_required. 65 when a damaged record was skipped, whatever the outcome (the answer printed is \
            still the right one for the rest of the cache); 64 usage, 66 store or key not found, 77 wrong key.
            """
    )

    @OptionGroup var options: StoreOptions

    @Option(name: .customLong("client-id"), help: "The client (application) id.")
    var clientID: String

    @Option(name: .customLong("account"), help: ArgumentHelp("The home account id (uid.utid), or the account's username.", valueName: "account"))
    var account: String

    @Option(help: "Authority URL (gives the environment and the realm).")
    var authority: String?

    @Option(help: "Authority host, with --realm instead of --authority.")
    var environment: String?

    @Option(help: "Tenant, with --environment.")
    var realm: String?

    @Option(help: "The requested scopes, separated by spaces or commas.")
    var scopes: String

    @Option(name: .customLong("token-type"), help: "Token type (default Bearer).")
    var tokenType: String?

    @Option(name: .customLong("key-id"), help: "Key id of a PoP or SSH-certificate token.")
    var keyID: String?

    @OptionGroup var extended: ExtendedKeyOptions

    @OptionGroup var onBehalfOf: OnBehalfOfOptions

    @Option(help: ArgumentHelp("Current time in Unix seconds (default: now).", valueName: "seconds"))
    var now: Int64?

    @Flag(help: "Print JSON.")
    var json = false

    @Flag(name: .customLong("include-secrets"), help: "Show token secrets instead of the redaction marker.")
    var includeSecrets = false

    /// The flag's earlier name: `export` says `--include-secrets` for the same idea, so that is the name shown; this
    /// one keeps working for the scripts that use it.
    @Flag(name: .customLong("reveal-secrets"), help: .hidden)
    var revealSecretsAlias = false

    var revealSecrets: Bool { includeSecrets || revealSecretsAlias }

    @Flag(name: .customLong("exit-code"), help: "Exit 0 for hit, 10 for refresh, 11 for interaction_required.")
    var exitCode = false

    /// The exit codes of `--exit-code`: one per outcome, clear of 1 and of the sysexits codes (64 to 78) every
    /// command uses, so that a script tells an outcome from a failure.
    static func exitCode(for outcome: SilentLookupResult.Outcome) -> Int32 {
        switch outcome {
        case .hit: 0
        case .refresh: 10
        case .interactionRequired: 11
        }
    }

    func validate() throws {
        if authority == nil && (environment == nil || realm == nil) {
            throw ValidationError("give --authority, or both --environment and --realm")
        }
        if authority != nil && (environment != nil || realm != nil) {
            throw ValidationError("--authority cannot be combined with --environment or --realm")
        }
    }

    func run() throws {
        var corrupt: [CorruptRecord] = []
        var outcome = SilentLookupResult.Outcome.hit
        try Failure.reporting {
            let now = self.now ?? Int64(Date().timeIntervalSince1970)
            let scopes = Arguments.scopes(self.scopes)
            let cache = try TokenStore.open(options.configuration(readOnly: true))
            // A username no account has names nobody: the lookup runs with it as the home account id, which no
            // record holds (home account ids never hold an `@`), and answers interaction_required as for any absent
            // account, with the client's family membership still read from its app metadata.
            let known = try Arguments.knownHomeAccountID(account, in: cache)
            if known == nil { Output.note("no account in the store has the username \(account): the user must sign in") }
            let homeAccountID = known ?? account
            let extendedCacheKey = try extended.key()
            let partition = try onBehalfOf.partition()
            let query: SilentLookupQuery
            if let authority {
                query = SilentLookupQuery(
                    clientID: clientID, homeAccountID: homeAccountID, authority: try Arguments.authority(authority), scopes: scopes,
                    tokenType: tokenType, keyID: keyID, extendedCacheKey: extendedCacheKey, onBehalfOf: partition, now: now, companionLoading: .withLookup
                )
            } else {
                query = SilentLookupQuery(
                    clientID: clientID, homeAccountID: homeAccountID, environment: environment!, realm: realm!, scopes: scopes,
                    tokenType: tokenType, keyID: keyID, extendedCacheKey: extendedCacheKey, onBehalfOf: partition, now: now, companionLoading: .withLookup
                )
            }
            // The command prints everything, so it reads everything from the lookup's own snapshot.
            let result: SilentLookupResult
            do {
                result = try cache.silentLookup(query)
            } catch let error as TokenCacheError where error.code == .invalidArgument {
                throw ValidationError("--scopes: \(error.message)")  // the query's only unchecked input
            }
            if json {
                print(try LookupJSON.render(result, revealSecrets: revealSecrets).prettyPrinted())
            } else {
                print(try LookupText.describe(result, revealSecrets: revealSecrets, now: now))
            }
            corrupt = try result.corrupt
            outcome = result.outcome
        }
        try DamagedRecords.report(corrupt)
        if exitCode, outcome != .hit { throw ExitCode(Self.exitCode(for: outcome)) }
    }
}

/// The documented JSON shape of a lookup result.
enum LookupJSON {
    static func render(_ result: SilentLookupResult, revealSecrets: Bool) throws -> JSONValue {
        let companions = try result.companions
        func secret(_ value: Secret) -> JSONValue { .string(revealSecrets ? value.reveal() : Secret.redactionMarker) }
        func optional(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        func optional(_ value: Int64?) -> JSONValue { value.map { .integer($0) } ?? .null }
        let accessToken: JSONValue = result.accessToken.map { stored in
            let token = stored.entity
            return .object([
                "secret": secret(token.secret), "home_account_id": .string(token.homeAccountID),
                "environment": .string(token.environment), "realm": .string(token.realm), "client_id": .string(token.clientID),
                "target": .string(token.target), "token_type": optional(token.tokenType), "key_id": optional(token.keyID),
                "ext_cache_key": optional(token.extendedCacheKey), "user_assertion_hash": optional(token.userAssertionHash), "cached_at": .integer(token.cachedAt), "expires_on": .integer(token.expiresOn),
                "extended_expires_on": optional(token.extendedExpiresOn), "refresh_on": optional(token.refreshOn),
            ])
        } ?? .null
        let refreshToken: JSONValue = companions.refreshToken.map { stored in
            let token = stored.entity
            return .object([
                "secret": secret(token.secret), "home_account_id": .string(token.homeAccountID),
                "environment": .string(token.environment), "client_id": .string(token.clientID), "family_id": optional(token.familyID),
            ])
        } ?? .null
        let idToken: JSONValue = companions.idToken.map { stored in
            .object(["secret": secret(stored.entity.secret), "realm": .string(stored.entity.realm), "claims": stored.entity.claims.map { .object($0) } ?? .null])
        } ?? .null
        let account: JSONValue = companions.account.map { stored in
            let account = stored.entity
            return .object([
                "home_account_id": .string(account.homeAccountID), "environment": .string(account.environment),
                "realm": .string(account.realm), "username": optional(account.username),
                "local_account_id": optional(account.localAccountID), "authority_type": .string(account.authorityType),
            ])
        } ?? .null
        return .object([
            "outcome": .string(result.outcome.rawValue), "refresh_recommended": .bool(result.refreshRecommended),
            "family_membership": .string(companions.familyMembership.rawValue),
            "access_token": accessToken, "refresh_token": refreshToken, "id_token": idToken, "account": account,
            "corrupt_records": DamagedRecords.json(try result.corrupt),
        ])
    }
}
