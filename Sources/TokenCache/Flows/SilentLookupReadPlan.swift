internal import TokenCacheStorage
internal import TokenCacheRecords

extension SilentLookupPlan {
    /// Every key range the lookup of `query` may read, known before it reads anything: the access-token bucket of
    /// each realm it tries, and, for the companions (which depend on what the buckets hold), the whole account in the
    /// refresh-token, ID-token and account spaces, its refresh leases and refusals, and the client's app metadata.
    /// A backend serves them in one call (``RangeFetching``); the ranges of the companions are the account's records
    /// of a kind, a handful, where the synchronous lookup probes exact keys.
    func readPlan(of query: SilentLookupQuery, index: BlindIndex) -> ReadPlan {
        var plan = ReadPlan()
        for realm in realms { plan.add(KeySpace.accessTokens, prefix: bucket(realm, of: query, index: index)) }
        plan.add(KeySpace.refreshTokens, prefix: tokenPrefix)
        plan.add(KeySpace.idTokens, prefix: accountPrefix)
        plan.add(KeySpace.accounts, prefix: accountPrefix)
        plan.add(KeySpace.meta, prefix: RecordStore.refreshLeaseKey(refreshTokenKey: tokenPrefix))
        plan.add(KeySpace.appMetadata, prefix: AppMetadata.clientPrefix(query.clientID, index: index))
        return plan
    }
}
