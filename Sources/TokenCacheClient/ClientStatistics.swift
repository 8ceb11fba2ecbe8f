import Synchronization

/// What a ``TokenClient`` did since it was made: how many requests the cache answered and how many needed the
/// token endpoint. Single flight shows as ``joinedRefreshes``: callers that got the result of a refresh another
/// caller started.
public struct ClientStatistics: Sendable, Hashable {
    /// Calls of ``TokenClient/token(for:refresh:)``.
    public var tokenRequests = 0
    /// Requests answered from the cache (a usable access token was stored), the in-process L1's included.
    public var cacheHits = 0
    /// Requests answered by the in-process L1 without a lookup in the store.
    public var answerCacheHits = 0
    /// Calls of a refresh closure: refresh tokens redeemed, in the foreground or the background.
    public var refreshes = 0
    /// Requests that waited for a refresh already running for the same account, client, authority and scopes
    /// instead of starting their own.
    public var joinedRefreshes = 0
    /// Refreshes started in the background because a returned token's `refresh_on` had passed.
    public var backgroundRefreshes = 0
    /// Refreshes whose closure threw, or whose response could not be stored.
    public var failedRefreshes = 0
    /// Calls of an acquire closure: new grants obtained without a refresh token (client credentials, on-behalf-of).
    public var acquisitions = 0
    /// Acquisitions whose closure threw, or whose response could not be stored.
    public var failedAcquisitions = 0
    /// Refreshes and acquisitions that found another process's lease (on the refresh token, or on acquiring the same
    /// token) and waited for its result (or for the lease to lapse) instead of calling the token endpoint themselves.
    public var leaseWaits = 0
    /// Redeemed responses whose store failed for a while (the store unreachable, say) and that were handed to the
    /// client's retries instead of being dropped.
    public var storesRetried = 0
    /// Of those, the ones stored late.
    public var storedLate = 0
    /// Of those, the ones the retries gave up on (their bound passed, or a failure that does not pass): the rotation
    /// was lost.
    public var lateStoresGivenUp = 0
}

/// The counters behind ``ClientStatistics``, updated without a lock.
final class ClientCounters: Sendable {
    /// Requests the L1 did not answer (it counts its own).
    let tokenRequests = Atomic<Int>(0)
    /// Hits the L1 did not answer.
    let cacheHits = Atomic<Int>(0)
    let refreshes = Atomic<Int>(0)
    let joinedRefreshes = Atomic<Int>(0)
    let backgroundRefreshes = Atomic<Int>(0)
    let failedRefreshes = Atomic<Int>(0)
    let acquisitions = Atomic<Int>(0)
    let failedAcquisitions = Atomic<Int>(0)
    let leaseWaits = Atomic<Int>(0)
    let storesRetried = Atomic<Int>(0)
    let storedLate = Atomic<Int>(0)
    let lateStoresGivenUp = Atomic<Int>(0)

    func snapshot(answerCacheHits: Int) -> ClientStatistics {
        ClientStatistics(
            tokenRequests: tokenRequests.load(ordering: .relaxed) + answerCacheHits,
            cacheHits: cacheHits.load(ordering: .relaxed) + answerCacheHits, answerCacheHits: answerCacheHits,
            refreshes: refreshes.load(ordering: .relaxed), joinedRefreshes: joinedRefreshes.load(ordering: .relaxed),
            backgroundRefreshes: backgroundRefreshes.load(ordering: .relaxed), failedRefreshes: failedRefreshes.load(ordering: .relaxed),
            acquisitions: acquisitions.load(ordering: .relaxed), failedAcquisitions: failedAcquisitions.load(ordering: .relaxed),
            leaseWaits: leaseWaits.load(ordering: .relaxed), storesRetried: storesRetried.load(ordering: .relaxed),
            storedLate: storedLate.load(ordering: .relaxed), lateStoresGivenUp: lateStoresGivenUp.load(ordering: .relaxed)
        )
    }
}

extension Atomic<Int> {
    /// Adds one.
    func increment() { wrappingAdd(1, ordering: .relaxed) }
}
