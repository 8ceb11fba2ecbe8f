internal import TokenCacheStorage
internal import TokenCacheRecords

/// A claim, recorded in the store, on obtaining a new grant for one request that no refresh token can answer — an
/// app's client-credentials call, a web API's on-behalf-of exchange — until a deadline: the cross-process half of a
/// single-flight acquisition.
///
/// Acquiring twice spends nothing that cannot be spent again (unlike redeeming a rotating refresh token), but every
/// host of a farm that finds the same app token expired would call the token endpoint at once; with the lease one does,
/// and the others wait for what it stores. The lease lives where a refresh lease does (FORMAT.md §5.7), named by the
/// storage key of the access token the acquisition is to store, and binds nobody once it lapses.
public struct AcquisitionLease: Sendable, Hashable {
    /// The access token the acquisition is for: the request's partition, bucket, environment and scopes.
    public let accessToken: AccessToken.Key
    /// Who holds it: 32 random lowercase hex digits, new for every lease taken.
    public let holder: String
    /// When it lapses, in Unix milliseconds of the lease clock (the server's on a shared store).
    public let expiresAt: Int64
}

/// What an attempt to take an acquisition lease found.
public enum AcquisitionLeaseAttempt: Sendable, Hashable {
    /// The lease is this caller's until its `expiresAt`: acquire, then store the response with
    /// ``CacheWriter/releaseAcquisitionLease(_:)`` in the same transaction.
    case taken(AcquisitionLease)
    /// Another holder's lease runs until this time (Unix milliseconds): wait for what it stores, or for that moment.
    case held(until: Int64)
}

extension CacheWriter {
    /// Takes the lease on acquiring the access token `accessToken` names for `duration`, unless another holder's
    /// lease on it is unexpired. Up to 16 other lapsed leases are removed on the way.
    ///
    /// - Parameter now: the system clock, in Unix milliseconds (a shared store uses the server's clock instead).
    public func takeAcquisitionLease(for accessToken: AccessToken.Key, duration: Duration, now: Int64) throws -> AcquisitionLeaseAttempt {
        try mappingErrors {
            let now = try leaseTime(now)
            let leaseKey = acquisitionLeaseKey(of: accessToken)
            if let until = try heldLeaseExpiry(at: leaseKey, now: now) { return .held(until: until) }
            let lease = try takeLease(at: leaseKey, duration: duration, now: now)
            return .taken(AcquisitionLease(accessToken: accessToken, holder: lease.holder, expiresAt: lease.expiresAt))
        }
    }

    /// Extends `lease` to `duration` from `now` if it is still the holder's; nil when it was lost.
    public func renewAcquisitionLease(_ lease: AcquisitionLease, duration: Duration, now: Int64) throws -> AcquisitionLease? {
        try mappingErrors {
            let now = try leaseTime(now)
            guard let expiresAt = try renewLease(at: acquisitionLeaseKey(of: lease.accessToken), holder: lease.holder, duration: duration, now: now)
            else { return nil }
            return AcquisitionLease(accessToken: lease.accessToken, holder: lease.holder, expiresAt: expiresAt)
        }
    }

    /// Releases `lease` if it is still the holder's. Whether it was.
    @discardableResult
    public func releaseAcquisitionLease(_ lease: AcquisitionLease) throws -> Bool {
        try mappingErrors { try releaseLease(at: acquisitionLeaseKey(of: lease.accessToken), holder: lease.holder) }
    }
}

extension CacheReader {
    /// The `meta` key of the lease on acquiring `accessToken` (FORMAT.md §5.7): `refresh-lease/` and the hex of the
    /// access token's entry key, which no refresh token's key equals.
    func acquisitionLeaseKey(of accessToken: AccessToken.Key) -> [UInt8] {
        RecordStore.refreshLeaseKey(refreshTokenKey: AccessToken.storageKey(for: accessToken, index: store.keyring.index))
    }

    /// When the lease on acquiring `accessToken` lapses, if another holds it unexpired at `now` (Unix milliseconds).
    public func acquisitionLeaseExpiry(for accessToken: AccessToken.Key, now: Int64) throws -> Int64? {
        try mappingErrors { try heldLeaseExpiry(at: acquisitionLeaseKey(of: accessToken), now: leaseTime(now)) }
    }
}
