internal import TokenCacheRecords

/// The first step of a silent lookup: everything the query alone decides, before anything is read.
///
/// Pure (no transaction, no I/O): the scopes the token must cover, the hosts that count as the query's cloud, the
/// realms to try in order and, for each, the bucket (the key range of FORMAT.md §4.3) its tokens live in. A lookup
/// reads only these buckets, so a backend that answers in one round trip can fetch them together; what is read is
/// then judged against this plan alone (``AccessTokenChoice``), by the rules of Docs/Semantics.md ("Access-token
/// lookup and candidate order").
///
/// The plan holds what it derives, not the query: the flow passes the query alongside (a copy of its strings on
/// every lookup is measurable at these speeds).
struct SilentLookupPlan {
    /// The request's scopes, without the reserved OIDC scopes.
    let requested: ScopeSet
    /// The query's environment and its aliases.
    let hosts: AliasGroup
    /// `P(hid)`: the prefix of every record of the query's account, shared by the buckets and the companions' ranges.
    let accountPrefix: [UInt8]
    /// `O(uah)` when the query names an on-behalf-of partition (FORMAT.md §4.3), else nil: kept apart from
    /// ``accountPrefix`` rather than as a second copy of it, which every lookup would retain and release.
    let partitionPrefix: [UInt8]?
    /// The prefix of the access-token buckets and the refresh tokens: the partition's, else the account's.
    var tokenPrefix: [UInt8] { partitionPrefix ?? accountPrefix }
    /// The realms to try, in order: the query's first; for `common`, `organizations` and `consumers`, then the
    /// account's home tenant.
    let realms: [String]
    /// Unix seconds the tokens are judged at.
    let now: Int64

    /// - Throws: ``TokenCacheError`` `.invalidArgument` when the request holds no scope besides
    ///   openid/profile/offline_access, or a malformed scope.
    init(_ query: borrowing SilentLookupQuery, aliases: EnvironmentAliases, index: BlindIndex) throws {
        requested = try ScopeSet.request(query.scopes)
        hosts = aliases.group(of: query.environment)
        accountPrefix = index.accountPrefix(query.homeAccountID)
        partitionPrefix = onBehalfOfPrefix(query.onBehalfOf?.value, index: index)
        realms = RealmResolution.candidates(queryRealm: query.realm, homeAccountID: query.homeAccountID)
        now = query.now
    }

    /// The bucket of `realm`: the key range of the access tokens of `query`'s account, client, token type, key id and
    /// extended cache key in that realm. Derived when asked (a keyed hash), so a hit in the first realm derives no other.
    func bucket(_ realm: String, of query: SilentLookupQuery, index: BlindIndex) -> [UInt8] {
        AccessToken.bucketPrefix(
            accountPrefix: tokenPrefix, clientID: query.clientID, realm: realm, tokenType: query.tokenType, keyID: query.keyID,
            extendedCacheKey: query.extendedCacheKey?.value, index: index
        )
    }

    /// Whether a token with this sealed summary answers the query: one of the query's hosts, covering the request,
    /// usable now.
    func accepts(_ summary: AccessTokenSummaryView) -> Bool {
        hosts.contains(summary.environment) && summary.covers(requested)
            && usability(expiresOn: summary.expiresOn, cachedAt: summary.cachedAt, refreshOn: summary.refreshOn).isUsable
    }

    /// The same test on a decoded token's own fields.
    func accepts(_ token: AccessToken) -> Bool {
        hosts.contains(token.environment) && requested.isCovered(byTarget: token.target) && usability(of: token).isUsable
    }

    /// Whether a usable token's refresh_on has passed: use it, and refresh in the background.
    func refreshRecommended(_ token: AccessToken) -> Bool { usability(of: token) == .usable(refreshRecommended: true) }

    private func usability(of token: AccessToken) -> AccessTokenUsability {
        usability(expiresOn: token.expiresOn, cachedAt: token.cachedAt, refreshOn: token.refreshOn)
    }

    private func usability(expiresOn: Int64, cachedAt: Int64, refreshOn: Int64?) -> AccessTokenUsability {
        AccessTokenExpiry.usability(expiresOn: expiresOn, cachedAt: cachedAt, refreshOn: refreshOn, now: now)
    }

    /// What identifies `query`'s companions: their realms are the plan's, the one the access token was found in
    /// (if any) first; the host the access token was written under (if one was found) is probed first for the account.
    func companionRequest(of query: SilentLookupQuery, accessTokenEnvironment: String?, inRealm realmUsed: String?) -> CompanionRequest {
        CompanionRequest(
            homeAccountID: query.homeAccountID, accountPrefix: accountPrefix, partitionPrefix: partitionPrefix, clientID: query.clientID,
            environment: query.environment,
            profileRealms: realmUsed.map { used in realms.first == used ? realms : [used] + realms.filter { $0 != used } } ?? realms,
            accessTokenEnvironment: accessTokenEnvironment
        )
    }
}
