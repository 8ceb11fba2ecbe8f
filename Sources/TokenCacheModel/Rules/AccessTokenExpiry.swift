/// Whether a cached access token may be returned at a given moment.
package enum AccessTokenUsability: Sendable, Hashable {
    /// The token may be returned. With `refreshRecommended`, its `refresh_on` has passed: return it, and let the
    /// caller refresh (and fall back to this token if the refresh fails).
    case usable(refreshRecommended: Bool)
    /// Less than `minimumRemainingLifetime` left (or expired).
    case expiringOrExpired
    /// cached_at is after now: the clock moved back or the record is suspect.
    case cachedInFuture

    /// Whether the token may be returned (``usable(refreshRecommended:)``).
    package var isUsable: Bool {
        if case .usable = self { return true }
        return false
    }
}

/// The expiry rule (Docs/Semantics.md, "Access-token expiry"), as a pure function of an injected `now`: the one
/// implementation, which the store's lookup and the client's in-process answers both call.
///
/// All times are Unix seconds. The function is total: any `Int64` values, however absurd (a corrupt or hostile
/// record), give an answer without trapping on overflow.
package enum AccessTokenExpiry {
    /// 300 s: expires_on − now ≥ 300 is usable (MSAL Python/JS/Go/ObjC boundary; .NET alone rejects exactly 300).
    ///
    /// The buffer keeps a token from expiring between the cache returning it and the resource server checking it.
    package static let minimumRemainingLifetime: Int64 = 300

    /// Classifies a cached access token at `now`.
    ///
    /// The checks run in this order, and the first that applies decides:
    /// 1. `cachedAt > now` → ``AccessTokenUsability/cachedInFuture``, whatever the expiry says: a record from the
    ///    future cannot be trusted to have a meaningful lifetime (msal-js, msal-go and ObjC reject it too).
    /// 2. `expiresOn − now < 300` → ``AccessTokenUsability/expiringOrExpired``. The difference is computed without
    ///    overflow: an `expiresOn` far beyond `now` is usable even when the subtraction would not fit in `Int64`.
    /// 3. otherwise usable, with `refreshRecommended` when `refreshOn` is present and `≤ now` (a `refresh_on`
    ///    equal to `now` has been reached).
    ///
    /// For example:
    ///
    /// ```swift
    /// AccessTokenExpiry.usability(expiresOn: 1_300, cachedAt: 0, refreshOn: 900, now: 1_000)
    /// // .usable(refreshRecommended: true)
    /// ```
    @inlinable
    package static func usability(expiresOn: Int64, cachedAt: Int64, refreshOn: Int64?, now: Int64) -> AccessTokenUsability {
        if cachedAt > now { return .cachedInFuture }
        guard hasMinimumLifetime(expiresOn: expiresOn, now: now) else { return .expiringOrExpired }
        let refreshRecommended = refreshOn.map { $0 <= now } ?? false
        return .usable(refreshRecommended: refreshRecommended)
    }

    /// `expiresOn − now ≥ minimumRemainingLifetime`, exactly, for all `Int64` inputs.
    @usableFromInline
    static func hasMinimumLifetime(expiresOn: Int64, now: Int64) -> Bool {
        let (remaining, overflow) = expiresOn.subtractingReportingOverflow(now)
        // The true difference lies outside Int64 only when the operands have opposite signs; its sign is then
        // the sign of `expiresOn − now`, and its magnitude exceeds any buffer.
        if overflow { return expiresOn > now }
        return remaining >= minimumRemainingLifetime
    }
}
