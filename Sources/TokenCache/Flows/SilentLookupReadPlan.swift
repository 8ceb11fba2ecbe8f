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
        plan.add(KeySpace.refreshTokens, prefix: accountPrefix)
        plan.add(KeySpace.idTokens, prefix: accountPrefix)
        plan.add(KeySpace.accounts, prefix: accountPrefix)
        plan.add(KeySpace.meta, prefix: RecordStore.refreshLeaseKey(refreshTokenKey: accountPrefix))
        plan.add(KeySpace.appMetadata, prefix: AppMetadata.clientPrefix(query.clientID, index: index))
        return plan
    }
}

extension TokenStore {
    /// Answers a silent token request as ``silentLookup(_:)`` does, with everything it may read fetched from the
    /// backend in one call: the lookup's plan names its key ranges first (``SilentLookupPlan/readPlan(of:index:)``),
    /// the backend serves them from one snapshot (one round trip for a backend across a network, which waits without
    /// blocking the caller's thread; one read transaction for LMDB), and the lookup then judges the fetched records
    /// by the same rules and code as the synchronous one. Companions come loaded (they were fetched anyway).
    ///
    /// For a local store the synchronous ``silentLookup(_:)`` is the faster call: it reads in place, without copying.
    package func fetchingSilentLookup(_ query: SilentLookupQuery) async throws -> SilentLookupResult {
        let records = store
        let plan: ReadPlan
        do {
            plan = try SilentLookupPlan(query, aliases: records.aliases, index: records.keyring.index).readPlan(of: query, index: records.keyring.index)
        } catch { throw TokenCacheError.wrap(error, directory: records.directory) }
        let fetched: FetchedRecords
        do { fetched = try await records.backend.fetch(plan) } catch { throw TokenCacheError.wrap(error, directory: records.directory) }
        var eager = query
        eager.companionLoading = .withLookup
        return try CacheReader(store: records, transaction: FetchedRecordReader(fetched)).silentLookup(eager)
    }
}
