internal import TokenCacheStorage
internal import TokenCacheRecords

/// The silent lookup over one fetch of its planned ranges (`Flows/SilentLookupReadPlan.swift`): the facade hands the
/// fetched records to a reader, and the lookup's own code runs over it.
extension TokenStore {
    /// Answers a silent token request as ``silentLookup(_:)`` does, with everything it may read fetched from the
    /// backend in one call: the lookup's plan names its key ranges first (``SilentLookupPlan/readPlan(of:index:)``),
    /// the backend serves them from one snapshot (one round trip for a backend across a network, which waits without
    /// blocking the caller's thread; one read transaction for LMDB), and the lookup then judges the fetched records
    /// by the same rules and code as the synchronous one. Companions come loaded (they were fetched anyway).
    ///
    /// For a local store the synchronous ``silentLookup(_:)`` is the faster call: it reads in place, without copying.
    package func fetchingSilentLookup(_ query: SilentLookupQuery) async throws -> SilentLookupResult {
        let plan = try lookupReadPlan(query)
        let fetched: FetchedRecords
        do { fetched = try await store.backend.fetch(plan) } catch { throw TokenCacheError.wrap(error, directory: store.directory) }
        return try silentLookup(query, over: fetched)
    }

    /// As the async ``fetchingSilentLookup(_:)``, blocking this thread while the backend fetches: what the
    /// synchronous ``silentLookup(_:)`` does on a store whose backend reads by plan (a server: one round trip).
    func fetchingSilentLookup(_ query: SilentLookupQuery) throws -> SilentLookupResult {
        let plan = try lookupReadPlan(query)
        let fetched: FetchedRecords
        do { fetched = try store.backend.fetchSynchronously(plan) } catch { throw TokenCacheError.wrap(error, directory: store.directory) }
        return try silentLookup(query, over: fetched)
    }

    private func lookupReadPlan(_ query: SilentLookupQuery) throws -> ReadPlan {
        do {
            return try SilentLookupPlan(query, aliases: store.aliases, index: store.keyring.index).readPlan(of: query, index: store.keyring.index)
        } catch { throw TokenCacheError.wrap(error, directory: store.directory) }
    }

    /// The lookup's own code over what was fetched; companions come loaded (they were fetched anyway).
    private func silentLookup(_ query: SilentLookupQuery, over fetched: FetchedRecords) throws -> SilentLookupResult {
        var eager = query
        eager.companionLoading = .withLookup
        return try store.readingCommitted { try CacheReader(store: store, transaction: FetchedRecordReader(fetched)).silentLookup(eager) }
    }
}
