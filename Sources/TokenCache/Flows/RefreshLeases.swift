import Foundation
internal import TokenCacheStorage
internal import TokenCacheRecords
internal import TokenCacheSodium

/// A claim, recorded in the store, on redeeming one refresh token until a deadline: the cross-process half of a
/// single-flight refresh.
///
/// Several processes sharing a cache may find the same access token expired at the same moment. Each would redeem
/// the same refresh token; with a server that rotates refresh tokens and treats a second redemption as replay, all
/// but one get `invalid_grant`, and some servers then revoke the whole grant. With a lease, the first process to
/// take it redeems; the others wait until the new token appears (the holder stores its response and releases the
/// lease in one transaction) or until the lease expires (its holder crashed or hung: nothing deadlocks).
public struct RefreshLease: Sendable, Hashable {
    /// The refresh token the lease is on.
    public let refreshToken: RefreshToken.Key
    /// Who holds it: 32 random lowercase hex digits, new for every lease taken.
    public let holder: String
    /// When it lapses, in Unix milliseconds of the system clock.
    public let expiresAt: Int64
    /// Whether it was taken over from another holder whose lease lapsed before that holder released it: a holder
    /// stopped (paused, swapped out, on a slow network) may still have redeemed the token and may yet store its
    /// rotation. When the token endpoint then refuses this redemption, the refusal may mean only that, so the taker
    /// waits a while for that rotation before it gives up (``CacheWriter/recordRefusedRedemption(_:of:now:)``).
    public let followsLapsedLease: Bool
}

/// What an attempt to take a refresh lease found.
public enum RefreshLeaseAttempt: Sendable, Hashable {
    /// The lease is this caller's until its `expiresAt`: redeem, then store the response with
    /// ``CacheWriter/releaseRefreshLease(_:)`` in the same transaction.
    case taken(RefreshLease)
    /// Another holder's lease runs until this time (Unix milliseconds): wait for its result or for that moment.
    case held(until: Int64)
    /// The refresh token is no longer the one the caller read (another process rotated or removed it): look up
    /// again, and redeem what is stored now, if anything.
    case superseded
    /// The token endpoint already refused this refresh token (this revision of it) when another holder redeemed it:
    /// it is not redeemed again. Wait for a newer one to be stored, or sign in.
    case refused
}

/// What a reader finds about the lease on a refresh token (``CacheReader/refreshLeaseState(on:now:)``).
public enum RefreshLeaseState: Sendable, Hashable {
    /// No unexpired lease: a redeemer may take one.
    case free
    /// Another holder's lease runs until this time (Unix milliseconds).
    case held(until: Int64)
    /// The token endpoint refused this refresh token, at the revision asked about: do not redeem it.
    case refused
}

extension CacheWriter {
    /// Takes the lease on redeeming `refreshToken` for `duration`, if no one else holds an unexpired one and the
    /// token stored under its key is still this one (same revision).
    ///
    /// A lease on a refresh token held by nobody, expired, or unreadable is taken. Up to 16 other expired leases
    /// (left by crashed holders) are removed on the way.
    ///
    /// - Parameters:
    ///   - duration: how long the redemption may take before others may start their own; longer than the token
    ///     endpoint's timeout.
    ///   - now: the system clock, in Unix milliseconds. Leases coordinate processes in real time: pass the system
    ///     clock, not a test clock. On a shared store the server's clock is used instead, so that hosts whose
    ///     clocks differ agree on when a lease lapses.
    public func takeRefreshLease(on refreshToken: StoredEntity<RefreshToken>, duration: Duration, now: Int64) throws -> RefreshLeaseAttempt {
        try mappingErrors {
            let now = try leaseTime(now)
            guard let current = try get(refreshToken.entity.key), current.revision == refreshToken.revision else { return .superseded }
            let leaseKey = refreshLeaseKey(of: refreshToken.entity.key)
            let previous = try store.refreshLease(at: leaseKey, in: writeTransaction)
            switch previous.map({ RefreshLeaseState(of: $0, revision: refreshToken.revision, now: now) }) ?? .free {
            case .refused: return .refused
            case .held(let until): return .held(until: until)
            case .free: break
            }
            let lease = try takeLease(at: leaseKey, duration: duration, now: now)
            // A lease still there, lapsed, and not refused: its holder stopped before it released it.
            let followsLapsed = previous.map { $0.refusedRevision == nil } ?? false
            return .taken(
                RefreshLease(refreshToken: refreshToken.entity.key, holder: lease.holder, expiresAt: lease.expiresAt, followsLapsedLease: followsLapsed)
            )
        }
    }

    /// Records, under `lease` if it is still the holder's, that the token endpoint refused the redemption of
    /// `refreshToken` (`invalid_grant`: the token is dead, or another holder redeemed it first): no process redeems
    /// that revision of it again (``RefreshLeaseAttempt/refused``), while a rotation stored since (a new revision)
    /// is redeemed as usual. The record stays a day, so that a dead token is not offered to the token endpoint again
    /// (a replay that reuse detection answers by revoking the whole grant); it is replaced by the next lease taken on
    /// the refresh token's key, or removed once lapsed. Whether it was recorded.
    @discardableResult
    public func recordRefusedRedemption(_ lease: RefreshLease, of refreshToken: StoredEntity<RefreshToken>, now: Int64) throws -> Bool {
        try mappingErrors {
            let now = try leaseTime(now)
            let leaseKey = refreshLeaseKey(of: lease.refreshToken)
            guard var held = try store.refreshLease(at: leaseKey, in: writeTransaction), held.holder == lease.holder else { return false }
            held.refusedRevision = Int64(truncatingIfNeeded: refreshToken.revision)
            held.expiresAt = now.addingReportingOverflow(Self.refusalLifetime).partialValue
            try store.putRefreshLease(held, at: leaseKey, now: now / 1000, in: writeTransaction)
            return true
        }
    }

    /// How long a lapsed lease stays before another taker's clean-up removes it: ten minutes, in milliseconds.
    static let lapsedLeaseKept: Int64 = 600_000

    /// How long a refusal record stays: a day, in milliseconds.
    static let refusalLifetime: Int64 = 86_400_000

    /// Extends `lease` to `duration` from `now` if it is still the holder's, for a redemption that takes longer than a
    /// lease lasts: the holder renews while it waits for the token endpoint, so that its lease lapses only when it
    /// stops (crashes or hangs), not while it works. The renewed lease, or nil when it was lost (it lapsed and another
    /// took it, or it is gone): the holder must then assume another process may redeem the same token.
    public func renewRefreshLease(_ lease: RefreshLease, duration: Duration, now: Int64) throws -> RefreshLease? {
        try mappingErrors {
            let now = try leaseTime(now)
            guard let expiresAt = try renewLease(at: refreshLeaseKey(of: lease.refreshToken), holder: lease.holder, duration: duration, now: now)
            else { return nil }
            return RefreshLease(
                refreshToken: lease.refreshToken, holder: lease.holder, expiresAt: expiresAt, followsLapsedLease: lease.followsLapsedLease
            )
        }
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// Releases `lease` if it is still the holder's (a lease that expired and was taken by another is left alone).
    /// Whether it was.
    @discardableResult
    public func releaseRefreshLease(_ lease: RefreshLease) throws -> Bool {
        try mappingErrors { try releaseLease(at: refreshLeaseKey(of: lease.refreshToken), holder: lease.holder) }
    }

    // The steps every lease shares, refresh or acquisition, at its `meta` key; `now` is the lease clock's already.

    /// Writes a new lease at `leaseKey`, lapsing `duration` from `now`, and removes up to 16 other lapsed leases.
    func takeLease(at leaseKey: [UInt8], duration: Duration, now: Int64) throws -> RecordStore.StoredRefreshLease {
        let lease = RecordStore.StoredRefreshLease(
            holder: Random.hexIdentifier(bytes: 16),
            expiresAt: now.addingReportingOverflow(max(1, Self.milliseconds(duration))).partialValue, pid: Int64(getpid())
        )
        try store.putRefreshLease(lease, at: leaseKey, now: now / 1000, in: writeTransaction)
        try removeExpiredLeases(except: leaseKey, now: now, limit: 16)
        return lease
    }

    /// Moves the lease at `leaseKey` to lapse `duration` from `now` if `holder` still holds it: its new expiry, or nil.
    func renewLease(at leaseKey: [UInt8], holder: String, duration: Duration, now: Int64) throws -> Int64? {
        guard var held = try store.refreshLease(at: leaseKey, in: writeTransaction), held.holder == holder, held.refusedRevision == nil
        else { return nil }
        held.expiresAt = now.addingReportingOverflow(max(1, Self.milliseconds(duration))).partialValue
        try store.putRefreshLease(held, at: leaseKey, now: now / 1000, in: writeTransaction)
        return held.expiresAt
    }

    /// Deletes the lease at `leaseKey` if `holder` still holds it (a refusal record stays). Whether it did.
    func releaseLease(at leaseKey: [UInt8], holder: String) throws -> Bool {
        guard let held = try store.refreshLease(at: leaseKey, in: writeTransaction), held.holder == holder, held.refusedRevision == nil
        else { return false }
        return try writeTransaction.delete(in: KeySpace.meta, key: leaseKey)
    }

    private func removeExpiredLeases(except kept: [UInt8], now: Int64, limit: Int) throws {
        var expired: [[UInt8]] = []
        try writeTransaction.forEach(in: KeySpace.meta, prefix: RecordStore.refreshLeasePrefix) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
            let key = Array(key)
            // A lapsed lease is kept a while longer: the next taker on its token must see that it follows a holder that
            // stopped (``RefreshLease/followsLapsedLease``), and may wait for that holder's rotation.
            let lease = try? store.refreshLease(sealed: value, key: key)
            let removableAt = lease.map { $0.refusedRevision == nil ? $0.expiresAt.addingReportingOverflow(Self.lapsedLeaseKept).partialValue : $0.expiresAt }
            if key != kept, removableAt ?? .min <= now { expired.append(key) }
            return expired.count < limit
        } } }
        for key in expired { _ = try writeTransaction.delete(in: KeySpace.meta, key: key) }
    }
}

extension CacheReader {
    /// The time leases are judged and written by: `now` (the caller's system clock) where the store's processes share
    /// a machine, the server's clock on a shared store, where hosts' clocks differ (``ServerClockReading``).
    func leaseTime(_ now: Int64) throws -> Int64 {
        guard let clock = transaction as? any ServerClockReading else { return now }
        return try clock.serverMilliseconds()
    }

    /// The `meta` key of the lease on the refresh token stored under `refreshToken` (FORMAT.md §5.7).
    func refreshLeaseKey(of refreshToken: RefreshToken.Key) -> [UInt8] {
        RecordStore.refreshLeaseKey(refreshTokenKey: RefreshToken.storageKey(for: refreshToken, index: store.keyring.index))
    }

    /// The lease on `refreshToken`'s key, if one is held and unexpired at `now` (Unix milliseconds). A refusal record
    /// is no lease: see ``refreshLeaseState(on:now:)``.
    public func refreshLeaseExpiry(on refreshToken: RefreshToken.Key, now: Int64) throws -> Int64? {
        try mappingErrors { try heldLeaseExpiry(at: refreshLeaseKey(of: refreshToken), now: leaseTime(now)) }
    }

    /// When the lease at `leaseKey` lapses, if one is held there unexpired at `now` (the lease clock's): a refusal
    /// record is no lease.
    func heldLeaseExpiry(at leaseKey: [UInt8], now: Int64) throws -> Int64? {
        guard let held = try store.refreshLease(at: leaseKey, in: transaction), held.refusedRevision == nil, held.expiresAt > now else { return nil }
        return held.expiresAt
    }

    /// What the lease record on `refreshToken` says at `now` (Unix milliseconds), for the revision of it that was read:
    /// free, held by another until a time, or refused by the token endpoint (do not redeem).
    public func refreshLeaseState(on refreshToken: StoredEntity<RefreshToken>, now: Int64) throws -> RefreshLeaseState {
        try mappingErrors {
            let now = try leaseTime(now)
            let leaseKey = refreshLeaseKey(of: refreshToken.entity.key)
            guard let held = try store.refreshLease(at: leaseKey, in: transaction) else { return .free }
            return RefreshLeaseState(of: held, revision: refreshToken.revision, now: now)
        }
    }
}

extension CacheReader {
    /// Whether a refusal record names this revision of `refreshToken`, whatever its age: the silent lookup then answers
    /// interaction required rather than offer a token the token endpoint refused (one get from `meta`).
    func isRefused(_ refreshToken: StoredEntity<RefreshToken>) throws -> Bool {
        let leaseKey = refreshLeaseKey(of: refreshToken.entity.key)
        guard let refused = try store.refreshLease(at: leaseKey, in: transaction)?.refusedRevision else { return false }
        return refused == Int64(truncatingIfNeeded: refreshToken.revision)
    }
}

extension RefreshLeaseState {
    /// What `record` means for the refresh token at `revision`: a refusal binds only the revision it names (a newer
    /// rotation is redeemed as usual) and lasts as long as the record; a lease binds until it lapses.
    init(of record: RecordStore.StoredRefreshLease, revision: UInt64, now: Int64) {
        if let refused = record.refusedRevision {
            self = refused == Int64(truncatingIfNeeded: revision) && record.expiresAt > now ? .refused : .free
        } else {
            self = record.expiresAt > now ? .held(until: record.expiresAt) : .free
        }
    }
}
