public import TokenCache
internal import TokenCacheRecords
internal import TokenCacheStorage

/// What ``TokenStore/setAccessTokenCap(_:progress:)`` did.
public struct CapReport: Sendable, Equatable {
    /// The cap now set; nil when none is.
    public var cap: Int?
    /// Access tokens in the store afterwards.
    public var accessTokens = 0
    /// Access tokens evicted to bring the store under the cap (expired ones among them).
    public var evicted = 0
    /// Write transactions committed.
    public var transactions = 0

    public init(cap: Int?, accessTokens: Int = 0, evicted: Int = 0, transactions: Int = 0) {
        self.cap = cap
        self.accessTokens = accessTokens
        self.evicted = evicted
        self.transactions = transactions
    }
}

extension TokenStore {
    /// Evictions per transaction when a cap is set below the store's size: each transaction holds the writer lock
    /// for a few milliseconds, as a purge batch does.
    static let capEnforcementBatch = 256

    /// The store's cap on access tokens, or nil when it has none.
    /// - Throws: ``TokenCacheError`` `.corruptRecord` when the cap record is damaged, and the errors of ``read(_:)``.
    public func accessTokenCap() throws -> Int? {
        try read { reader in try reader.mappingErrors { try store.accessTokenCap(in: reader.transaction) } }
    }

    /// Sets (or, with nil, removes) a cap on the number of access tokens, kept in the store so that every process
    /// that writes to it enforces it, and brings the store under it at once.
    ///
    /// Each write that adds an access token to a store at its cap evicts others: expired tokens first, then the least
    /// recently cached, chosen from a random sample (``EvictionChoice``); the writes report how many
    /// (``IngestResult/accessTokensEvicted``). Refresh tokens, ID tokens, accounts and app metadata are never evicted.
    /// Setting a cap below the current count evicts the excess here, in transactions of a few hundred removals
    /// each, so that a kill at any point leaves a consistent store (running the command again finishes the work).
    /// - Parameters:
    ///   - cap: The most access tokens the store keeps, at least 1; nil removes the cap.
    ///   - progress: Called after each transaction with the report so far.
    /// - Throws: ``TokenCacheError`` `.invalidArgument` for a cap below 1; the errors of ``write(_:)``.
    @discardableResult
    public func setAccessTokenCap(_ cap: Int?, progress: ((CapReport) -> Void)? = nil) throws -> CapReport {
        if let cap, cap < 1 { throw TokenCacheError(.invalidArgument, "an access-token cap must be at least 1 (got \(cap))") }
        var report = CapReport(cap: cap)
        // Setting the cap adds a small record, but on a full store it is the way out: it may use the reserve.
        report.accessTokens = try removing { writer in
            try writer.mappingErrors { try store.setAccessTokenCap(cap, now: writer.now, in: writer.writeTransaction) }
            return try writer.transaction.count(in: KeySpace.accessTokens)
        }
        report.transactions = 1
        progress?(report)
        guard let cap else { return report }
        if report.accessTokens > cap {
            // Far over the cap, sampling would keep many old tokens: find the rank that separates the excess exactly,
            // then remove the tokens below it in batches, as a purge does.
            let now = Self.currentTime()
            let threshold = try evictionThreshold(excess: report.accessTokens - cap, now: now)
            try removeInBatches(
                AccessToken.self, where: { EvictionChoice.Rank(valid: $0.expiresOn > now, cachedAt: $0.cachedAt) < threshold },
                dryRun: false, batch: Self.purgeBatch
            ) { batch in
                guard batch.removed > 0 else { return }
                report.evicted += batch.removed
                report.accessTokens -= batch.removed
                report.transactions += 1
                progress?(report)
            }
            report.accessTokens = try read { try $0.transaction.count(in: KeySpace.accessTokens) }
        }
        // What is left (tokens of the same age as the last ones removed, tokens other processes wrote meanwhile) goes
        // by sampling, as on a write.
        var batch = Self.capEnforcementBatch
        while report.accessTokens > cap {
            let attempt: (Int, Int)
            do {
                attempt = try removing { writer in
                let evicted = try writer.mappingErrors {
                    try writer.evictOverCap(cap, now: writer.now, protecting: nil, atMost: batch)
                }
                // Samples are read all over the store: let their pages go, as a scan does.
                writer.releaseScannedPages()
                return (evicted, try writer.transaction.count(in: KeySpace.accessTokens))
                }
            } catch let error as TokenCacheError where [.storageFull, .ioFailure].contains(error.code) && batch > 1 {
                batch /= 2  // a full store or disk: fewer removals per transaction, as a purge does
                continue
            }
            let (evicted, left) = attempt
            report.evicted += evicted
            report.accessTokens = left
            report.transactions += 1
            progress?(report)
            if evicted == 0 { break }  // only damaged records left to sample: `verify` reports them
        }
        return report
    }

    /// The eviction rank (``EvictionChoice/rank(_:now:)``: expired first, then by age) below which every access
    /// token goes: the rank of the (excess + 1)-th token in that order, so that at most `excess` rank below it.
    /// One pass over the summaries, keeping 9 bytes per token.
    private func evictionThreshold(excess: Int, now: Int64) throws -> EvictionChoice.Rank {
        var ranks: [EvictionChoice.Rank] = []
        try read { reader in
            try reader.transaction.forEach(in: KeySpace.accessTokens, prefix: []) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
                if let rank = try? store.withSummary(value, key: key, { EvictionChoice.Rank(valid: $0.expiresOn > now, cachedAt: $0.cachedAt) }) {
                    ranks.append(rank)
                }
                if ranks.count % 4_096 == 0 { reader.releaseScannedPages() }
                return true
            } } }
            reader.releaseScannedPages()
        }
        guard excess < ranks.count else { return EvictionChoice.Rank(valid: true, cachedAt: .max) }
        ranks.sort()
        return ranks[excess]
    }
}
