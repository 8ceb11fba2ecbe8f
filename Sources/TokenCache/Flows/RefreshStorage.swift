/// A refresh's token response, prepared for storing before the write transaction that stores it: the rotated refresh
/// token and every record the response yields, derived and keyed (``IngestPlan``). A client's refresh prepares it
/// first, so that no parsing or key derivation runs under the writer lock, nor again when a transaction re-runs after
/// the map grows; ``CacheWriter/storeRefresh(_:)`` then only reads, judges and writes.
package struct PreparedRefresh: Sendable {
    /// The refresh token that was redeemed; the rotation replaces it only while it is still the one stored.
    let redeemed: RefreshToken
    /// The response's new refresh token, as it replaces the redeemed one; nil when the response carried none.
    let rotated: RefreshToken?
    let plan: IngestPlan
    let now: Int64
}

extension CacheWriter {
    /// Stores a prepared refresh: the rotated refresh token by compare-and-swap against the redeemed one, then the
    /// rest of the response. When another process rotated the token first, its token is as new as this one and stays
    /// (overwriting it would lose its rotation): the rest is stored without this response's refresh token. False, with
    /// nothing written, when the account was signed out since the redeemed token was read (no refresh token is left
    /// under either owner).
    package func storeRefresh(_ prepared: PreparedRefresh) throws -> Bool {
        var plan = prepared.plan
        if let rotated = prepared.rotated {
            do { try replaceRefreshToken(rotated, expectedSecret: prepared.redeemed.secret) } catch let error as TokenCacheError
                where error.code == .conflict
            {
                if error.currentRevision == nil { return false }
                plan = plan.droppingRefreshToken()
            }
        } else if try get(prepared.redeemed.key) == nil {
            return false
        }
        _ = try ingest(plan, now: prepared.now)
        return true
    }
}
