public import TokenCache

/// What ``TokenStore/purgeExpired(olderThan:now:dryRun:progress:)`` removed (or, in a dry run, would remove).
public struct PurgeReport: Sendable, Equatable {
    public var accessTokensRemoved = 0
    public var refreshTokensRemoved = 0
    /// Records read to find them.
    public var examined = 0
    /// Write transactions committed (none in a dry run).
    public var transactions = 0
    public var dryRun = false
    /// Damaged records met (left in place: `verify` reports them).
    public var corrupt: [CorruptRecord] = []
}

extension TokenStore {
    /// Records read per transaction at most, and removed per transaction at most: a purge of a large store holds the
    /// writer lock for a few milliseconds at a time, so that other processes' writes go on between its batches.
    static let purgeBatch = PurgeBatch(examined: 4_096, removed: 1_024)

    /// Removes access tokens past their expiry, and refresh tokens past their own `expires_on` (most carry none and
    /// stay), in bounded transactions.
    ///
    /// Each transaction reads at most a few thousand records and commits on its own, so the purge can be stopped or
    /// killed at any point: what committed is gone, the rest is untouched, and running it again finishes the work.
    /// A record is removed only if it is expired in the transaction that removes it.
    /// - Parameters:
    ///   - olderThan: Only tokens expired at least this many seconds ago (default 0: every expired token).
    ///   - now: Unix seconds (default: the system clock).
    ///   - dryRun: Count what would be removed, remove nothing.
    ///   - progress: called after each batch with the report so far.
    /// - Throws: ``TokenCacheError``: the errors of ``write(_:)`` (``read(_:)`` in a dry run); a batch that fails
    ///   rolls back alone, and the batches before it stay committed.
    @discardableResult
    public func purgeExpired(
        olderThan: Int64 = 0, now: Int64? = nil, dryRun: Bool = false, progress: ((PurgeReport) -> Void)? = nil
    ) throws -> PurgeReport {
        try purgeExpired(olderThan: olderThan, now: now, dryRun: dryRun, batch: Self.purgeBatch, progress: progress)
    }

    /// As the public method, with the batch size given (tests use tiny batches to cross every batch boundary).
    func purgeExpired(olderThan: Int64, now: Int64?, dryRun: Bool, batch: PurgeBatch, progress: ((PurgeReport) -> Void)?) throws -> PurgeReport {
        let cutoff = (now ?? Self.currentTime()).subtractingReportingOverflow(max(olderThan, 0)).partialValue
        var report = PurgeReport(dryRun: dryRun)
        func purge<S: StorableEntity>(_ type: S.Type, expiresOn: (S) -> Int64?) throws {
            try removeInBatches(S.self, where: { expiresOn($0).map { $0 <= cutoff } ?? false }, dryRun: dryRun, batch: batch) { batch in
                report.examined += batch.examined
                report.corrupt += batch.corrupt
                if S.kind == .accessToken { report.accessTokensRemoved += batch.removed } else { report.refreshTokensRemoved += batch.removed }
                if !dryRun && batch.removed > 0 { report.transactions += 1 }
                progress?(report)
            }
        }
        try purge(AccessToken.self, expiresOn: \.expiresOn)
        try purge(RefreshToken.self, expiresOn: \.expiresOn)
        return report
    }
}
