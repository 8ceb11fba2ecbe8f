internal import TokenCacheStorage
internal import TokenCacheRecords
internal import TokenCacheSodium

/// How many refresh leases a store holds now and how old the oldest is, naming none of them: what an operator needs
/// to see that refreshes are under way, or stuck (`cachetool status`). A lease's key names the refresh token it is on
/// (a blind key, FORMAT.md §5.7) and its body a holder and a pid: none of that is reported.
public struct RefreshLeaseCensus: Sendable, Equatable {
    /// Leases held and unexpired: a process is redeeming that refresh token (or acquiring that token) now, or was until
    /// the lease lapses.
    public var held = 0
    /// Leases past their expiry still stored (a holder that stopped; the next lease taken removes them).
    public var lapsed = 0
    /// Records of a redemption the token endpoint refused (kept so that the refused token is not redeemed again).
    public var refusals = 0
    /// Lease records that do not open under this key or do not decode (they bind nobody).
    public var unreadable = 0
    /// Seconds since the oldest held lease was taken or last renewed, by the lease clock; nil when none is held.
    public var oldestHeldAge: Int64? = nil
    /// The lease clock's time the census was taken at, Unix milliseconds: the server's on a shared store (the clock
    /// leases are judged by), the caller's otherwise.
    public var now: Int64 = 0

    public init() {}
}

extension CacheReader {
    /// Counts the store's refresh leases at `now` (Unix milliseconds; on a shared store the server's clock is used
    /// instead, as for leases themselves).
    public func refreshLeaseCensus(now: Int64) throws -> RefreshLeaseCensus {
        try mappingErrors {
            var census = RefreshLeaseCensus()
            let now = try leaseTime(now)
            census.now = now
            try transaction.forEach(in: KeySpace.meta, prefix: RecordStore.refreshLeasePrefix) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
                guard let (lease, writtenAt) = try? store.refreshLeaseAndWriteTime(sealed: value, key: Array(key)) else {
                    census.unreadable += 1
                    return true
                }
                if lease.refusedRevision != nil {
                    census.refusals += 1
                } else if lease.expiresAt > now {
                    census.held += 1
                    let age = max(0, now / 1000 - writtenAt)
                    census.oldestHeldAge = max(census.oldestHeldAge ?? 0, age)
                } else {
                    census.lapsed += 1
                }
                return true
            } } }
            return census
        }
    }
}
