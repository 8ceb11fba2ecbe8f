internal import TokenCacheStorage
internal import TokenCacheRecords

extension IngestPlan {
    /// Everything an ingest reads, named before it reads anything, for a write prepared outside a transaction
    /// (``WritePlan``): the store's header (every write checks it), the access-token cap and, when there is one, the
    /// count it is checked against (a store without a cap never counts its access tokens), the new token's bucket
    /// (the token it replaces, intersect-delete, placement), the records the response's refresh token, ID token,
    /// account and app metadata replace, and the stretch of access tokens the expiry sweep reads next, from `cursor`.
    ///
    /// Only an eviction over the cap reads more (a sample from a random key): such a write runs as a transaction
    /// instead.
    func readPlan(sweepingFrom cursor: [UInt8]) -> ReadPlan {
        var plan = ReadPlan()
        plan.add(.meta, key: FormatConstants.headerKey)
        plan.add(.meta, key: RecordStore.accessTokenCapKey)
        plan.addCount(of: .accessTokens, onlyIfPresent: ReadPlan.Record(space: .meta, key: RecordStore.accessTokenCapKey))
        plan.add(.accessTokens, prefix: bucket)
        if let refreshTokenKey { plan.add(.refreshTokens, key: refreshTokenKey) }
        if let idTokenKey { plan.add(.idTokens, key: idTokenKey) }
        if let accountKey { plan.add(.accounts, key: accountKey) }
        plan.add(.appMetadata, key: appMetadataKey)
        plan.add(.accessTokens, from: cursor, limit: ExpirySweep.size)
        return plan
    }
}
