/// The refresh leases of a client's refresh, each step in a transaction of its own: the facade's doorway to the
/// writer's lease operations (`Flows/RefreshLeases.swift`), which run inside any write transaction.
extension TokenStore {
    /// Takes the lease on redeeming `refreshToken`, in a transaction of its own. See
    /// ``CacheWriter/takeRefreshLease(on:duration:now:)``.
    public func takeRefreshLease(on refreshToken: StoredEntity<RefreshToken>, duration: Duration, now: Int64) throws -> RefreshLeaseAttempt {
        try write { try $0.takeRefreshLease(on: refreshToken, duration: duration, now: now) }
    }

    /// Extends `lease`, in a transaction of its own. See ``CacheWriter/renewRefreshLease(_:duration:now:)``.
    public func renewRefreshLease(_ lease: RefreshLease, duration: Duration, now: Int64) throws -> RefreshLease? {
        try write { try $0.renewRefreshLease(lease, duration: duration, now: now) }
    }

    /// Records the token endpoint's refusal under `lease`, in a transaction of its own. See
    /// ``CacheWriter/recordRefusedRedemption(_:of:now:)``.
    @discardableResult
    public func recordRefusedRedemption(_ lease: RefreshLease, of refreshToken: StoredEntity<RefreshToken>, now: Int64) throws -> Bool {
        try write { try $0.recordRefusedRedemption(lease, of: refreshToken, now: now) }
    }

    /// Releases `lease` without storing anything (the redemption failed), in a transaction that only removes.
    @discardableResult
    public func releaseRefreshLease(_ lease: RefreshLease) throws -> Bool {
        try removing { try $0.releaseRefreshLease(lease) }
    }
}
