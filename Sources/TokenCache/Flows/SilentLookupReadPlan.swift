internal import TokenCacheStorage
internal import TokenCacheRecords

extension SilentLookupPlan {
    /// Every key range the lookup of `query` may read, known before it reads anything: the access-token bucket of
    /// each realm it tries, and, for the companions (which depend on what the buckets hold), the client's ID tokens
    /// in each of those realms, the whole account in the refresh-token and account spaces, its refresh leases and
    /// refusals, and the client's app metadata. A backend serves them in one call (``RangeFetching``); the ranges of
    /// the companions are the account's records of a kind, a handful, where the synchronous lookup probes exact keys.
    /// The ID tokens are read per client and realm, as the companions look for them, not for the whole account: an
    /// account signed in to several clients and tenants holds one per pair, each about as large as an access token,
    /// and a fetch that carried them all would send the server's rows several times over.
    func readPlan(of query: SilentLookupQuery, index: BlindIndex) -> ReadPlan {
        var plan = ReadPlan()
        for realm in realms { plan.add(KeySpace.accessTokens, prefix: bucket(realm, of: query, index: index)) }
        plan.add(KeySpace.refreshTokens, prefix: tokenPrefix)
        for realm in realms {
            plan.add(KeySpace.idTokens, prefix: IDToken.ownerPrefix(accountPrefix: accountPrefix, clientID: query.clientID, realm: realm, index: index))
        }
        plan.add(KeySpace.accounts, prefix: accountPrefix)
        plan.add(KeySpace.meta, prefix: RecordStore.refreshLeaseKey(refreshTokenKey: tokenPrefix))
        plan.add(KeySpace.appMetadata, prefix: AppMetadata.clientPrefix(query.clientID, index: index))
        return plan
    }
}
