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
