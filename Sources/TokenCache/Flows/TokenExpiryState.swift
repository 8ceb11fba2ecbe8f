/// Where a token stands at a moment: the one definition every count of "valid", "refresh due" and "expired" uses
/// (TokenCacheOperations' `StoreStatistics`, and each view of `cachetool`), so that two views of one store never
/// disagree about a token.
///
/// The states follow what a silent lookup does with an access token (``AccessTokenExpiry``): it returns a valid one
/// as it is; one whose refresh is due it returns with a refresh recommended (its `refresh_on` has passed) or no longer
/// returns (less than five minutes left), so either way the caller refreshes; an expired one never.
public enum TokenExpiryState: String, Sendable, Hashable, CaseIterable {
    /// At least five minutes left, and its `refresh_on`, if it has one, not reached.
    case valid
    /// Not expired, but its `refresh_on` has passed or less than five minutes are left.
    case refreshDue = "refresh_due"
    /// Its `expires_on` is at or before now.
    case expired

    /// The state of a token expiring at `expiresOn` (with `refreshOn`, if any) at `now`, all in Unix seconds. Total
    /// over all `Int64` values (the subtraction cannot overflow).
    public init(expiresOn: Int64, refreshOn: Int64?, now: Int64) {
        if expiresOn <= now {
            self = .expired
        } else if Self.expiringSoon(expiresOn: expiresOn, now: now) || (refreshOn.map { $0 <= now } ?? false) {
            self = .refreshDue
        } else {
            self = .valid
        }
    }

    /// Not expired, but with less than the five minutes a silent lookup requires (a refresh-due token that a lookup
    /// no longer returns at all).
    public static func expiringSoon(expiresOn: Int64, now: Int64) -> Bool {
        expiresOn > now && !AccessTokenExpiry.usability(expiresOn: expiresOn, cachedAt: .min, refreshOn: nil, now: now).isUsable
    }
}
