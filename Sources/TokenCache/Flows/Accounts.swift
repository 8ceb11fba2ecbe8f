internal import TokenCacheRecords

/// One signed-in user: a home account and its tenant profiles (one Account record per realm).
public struct AccountSummary: Sendable {
    /// The home account id shared by every profile: `uid.utid`, or the id_token `sub` (ADFS).
    public var homeAccountID: String
    /// The username of the home-tenant profile, else of any profile.
    public var username: String?
    /// The per-realm Account records; the home tenant's first.
    public var profiles: [StoredEntity<Account>]
}

/// What a sign-out removed.
public struct RemovalSummary: Sendable, Hashable {
    /// Access tokens removed.
    public var accessTokens = 0
    /// Refresh tokens removed.
    public var refreshTokens = 0
    /// ID tokens removed.
    public var idTokens = 0
    /// Account records (tenant profiles) removed.
    public var accounts = 0
    /// Records under the account's key prefix that could not be opened (damaged or tampered with), removed too.
    public var damagedRecords: [CorruptRecord] = []
    /// The records removed that could be read; ``damagedRecords`` come on top.
    public var total: Int { accessTokens + refreshTokens + idTokens + accounts }
}

extension CacheReader {
    /// The signed-in users, one entry per home account with its tenant profiles.
    ///
    /// - Parameters:
    ///   - clientID: only accounts this client can use silently: those with a refresh token of the client, or
    ///     a family refresh token when the client is (or may be) a family member (MSAL .NET's view). nil lists
    ///     every account (MSAL Go's and Python's view).
    ///   - environment: only profiles in this host's alias group.
    ///   - username: ASCII-case-insensitive.
    public func accounts(
        clientID: String? = nil, environment: String? = nil, username: String? = nil
    ) throws -> (accounts: [AccountSummary], corrupt: [CorruptRecord]) {
        try mappingErrors { try accountsUnmapped(clientID: clientID, environment: environment, username: username, aliases: store.aliases) }
    }

    private func accountsUnmapped(
        clientID: String?, environment: String?, username: String?, aliases: EnvironmentAliases
    ) throws -> (accounts: [AccountSummary], corrupt: [CorruptRecord]) {
        var corrupt: [CorruptRecord] = []
        var byHome: [String: [StoredEntity<Account>]] = [:]
        try scan(Account.self, prefix: [], corrupt: &corrupt) { stored in
            if let environment, !aliases.areAliases(stored.entity.environment, environment) { return }
            byHome[stored.entity.homeAccountID.asciiLowercased, default: []].append(stored)
        }
        var result: [AccountSummary] = []
        for (_, profiles) in byHome.sorted(by: { $0.key < $1.key }) {
            let first = profiles[0].entity
            let home = RealmResolution.homeTenant(ofHomeAccountID: first.homeAccountID)?.asciiLowercased
            let ordered = profiles.sorted { lhs, rhs in
                let lhsHome = lhs.entity.realm.asciiLowercased == home, rhsHome = rhs.entity.realm.asciiLowercased == home
                return lhsHome != rhsHome ? lhsHome : lhs.entity.realm < rhs.entity.realm
            }
            let names = ordered.compactMap { $0.entity.username }.filter { !$0.isEmpty }
            if let username, !names.contains(where: { ASCII.equalIgnoringCase($0, username) }) { continue }
            if let clientID {
                let usable = try refreshTokenToRedeem(
                    homeAccountID: first.homeAccountID, clientID: clientID, environment: environment ?? first.environment,
                    aliases: aliases, corrupt: &corrupt
                )
                guard usable != nil else { continue }
            }
            result.append(AccountSummary(homeAccountID: first.homeAccountID, username: names.first, profiles: ordered))
        }
        return (result, corrupt.removingDuplicates())
    }
}

extension CacheWriter {
    /// Signs an account out, in this transaction.
    ///
    /// With a client: its access tokens and ID tokens, its own refresh token, the family refresh token when
    /// the client's app metadata says it is a family member, and the account's Account records. Without
    /// (`clientID == nil`, "remove everywhere"): every credential and Account record of the home account.
    /// App metadata always stays. `environment` limits the removal to one alias group (nil: every cloud).
    ///
    /// Records under the account's key prefix that cannot be opened are removed as well, whatever the client and
    /// cloud: the prefix is a keyed hash of the home account id, so they belong to this account; they can never be
    /// read again; and left in place, a damaged refresh token whose tamper is later reversed would bring a
    /// signed-out session back. They are listed in ``RemovalSummary/damagedRecords``.
    @discardableResult
    public func removeAccount(
        homeAccountID: String, clientID: String?, environment: String? = nil
    ) throws -> RemovalSummary {
        try mappingErrors {
            try removeAccountUnmapped(homeAccountID: homeAccountID, clientID: clientID, environment: environment, aliases: store.aliases)
        }
    }

    private func removeAccountUnmapped(
        homeAccountID: String, clientID: String?, environment: String?, aliases: EnvironmentAliases
    ) throws -> RemovalSummary {
        var familyID: String? = nil
        if let clientID {
            var ignored: [CorruptRecord] = []
            var metadata: StoredEntity<AppMetadata>? = nil
            try scan(AppMetadata.self, prefix: AppMetadata.clientPrefix(clientID, index: store.keyring.index), corrupt: &ignored) { stored in
                if environment.map({ aliases.areAliases(stored.entity.environment, $0) }) ?? true { metadata = stored }
            }
            if let family = metadata?.entity.familyID, !family.isEmpty { familyID = family }
        }
        let scope = SignOutScope(clientID: clientID, environment: environment, familyID: familyID, aliases: aliases)
        var summary = RemovalSummary()
        summary.accessTokens = try remove(AccessToken.self, homeAccountID, &summary, matches: scope.removes)
        summary.idTokens = try remove(IDToken.self, homeAccountID, &summary, matches: scope.removes)
        summary.refreshTokens = try remove(RefreshToken.self, homeAccountID, &summary, matches: scope.removes)
        summary.accounts = try remove(Account.self, homeAccountID, &summary, matches: scope.removes)
        return summary
    }

    /// Deletes the records of `homeAccountID` of one kind that `matches` selects, and every damaged record under the
    /// account's prefix (added to `summary.damagedRecords`). Returns how many readable records it deleted.
    private func remove<S: StorableEntity>(
        _ type: S.Type, _ homeAccountID: String, _ summary: inout RemovalSummary, matches: (S) -> Bool
    ) throws -> Int {
        try remove(S.self, under: store.keyring.index.accountPrefix(homeAccountID), &summary) { entity in
            if let storedHome = entity.homeAccountIDForIndex, ASCII.equalIgnoringCase(storedHome, homeAccountID) { return matches(entity) }
            return false
        }
    }

    /// Deletes the records of one kind under `prefix` that `owned` selects, and every damaged record under it (added
    /// to `summary.damagedRecords`: the prefix is a keyed hash of its owner, so they are the owner's). Returns how many
    /// readable records it deleted.
    func remove<S: StorableEntity>(
        _ type: S.Type, under prefix: [UInt8], _ summary: inout RemovalSummary, owned: (S) -> Bool
    ) throws -> Int {
        var doomed: [[UInt8]] = []
        var damagedKeys: [[UInt8]] = []
        var damaged: [CorruptRecord] = []
        try scan(S.self, prefix: prefix, corrupt: &damaged, damagedKeys: { damagedKeys.append($0) }) { stored in
            if owned(stored.entity) { doomed.append(stored.record.key) }  // where it is stored (a lone access token: its bucket prefix)
        }
        let removed = try deleteRecords(S.self, keys: doomed + damagedKeys)
        summary.damagedRecords += damaged
        return removed - damagedKeys.count
    }
}
