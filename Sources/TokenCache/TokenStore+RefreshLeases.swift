/// The leases of a client's refresh or acquisition, each step in a transaction of its own: the facade's doorway to the
/// writer's lease operations (`Flows/RefreshLeases.swift`, `Flows/AcquisitionLeases.swift`), which run inside any
/// write transaction.
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

    /// Takes the lease on acquiring `accessToken`, in a transaction of its own. See
    /// ``CacheWriter/takeAcquisitionLease(for:duration:now:)``.
    public func takeAcquisitionLease(for accessToken: AccessToken.Key, duration: Duration, now: Int64) throws -> AcquisitionLeaseAttempt {
        try write { try $0.takeAcquisitionLease(for: accessToken, duration: duration, now: now) }
    }

    /// Extends `lease`, in a transaction of its own. See ``CacheWriter/renewAcquisitionLease(_:duration:now:)``.
    public func renewAcquisitionLease(_ lease: AcquisitionLease, duration: Duration, now: Int64) throws -> AcquisitionLease? {
        try write { try $0.renewAcquisitionLease(lease, duration: duration, now: now) }
    }

    /// Releases `lease` without storing anything (the acquisition failed), in a transaction that only removes.
    @discardableResult
    public func releaseAcquisitionLease(_ lease: AcquisitionLease) throws -> Bool {
        try removing { try $0.releaseAcquisitionLease(lease) }
    }

    /// Ingests what an acquisition under `lease` obtained and releases the lease, in one durable transaction: those
    /// waiting on the lease find the token as they find the lease gone. See ``CacheWriter/ingest(_:context:)``.
    @discardableResult
    public func ingest(_ response: TokenResponse, context: TokenRequestContext, releasing lease: AcquisitionLease) throws -> IngestResult {
        let plan = try IngestPlan.mapped(response: response, context: context, for: store)
        return try write { writer in
            // Not released if lost meanwhile: the token is stored all the same, and the next holder finds it.
            _ = try writer.releaseAcquisitionLease(lease)
            return try writer.ingest(plan, now: context.now)
        }
    }
}
