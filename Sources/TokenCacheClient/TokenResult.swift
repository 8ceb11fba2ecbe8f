public import TokenCache

/// An access token that answers a ``TokenRequest``, with what an app wants to know beside it.
///
/// A copy costs one reference count: the fields live in one immutable object, which the client's L1 shares with
/// every answer it gives.
public struct TokenResult: Sendable {
    /// Where the token came from.
    public enum Source: String, Sendable, Hashable {
        /// The cache held it.
        case cache
        /// The caller's refresh closure redeemed a refresh token for it, just now, in this call or in the refresh
        /// this call joined.
        case refresh
        /// The caller's acquire closure obtained it without a refresh token (client credentials, an on-behalf-of
        /// exchange), just now, in this call or in the acquisition this call joined.
        case acquired
    }

    /// What every copy of one answer shares.
    private final class Fields: Sendable {
        let accessToken: Secret
        let expiresOn: Int64
        let refreshOn: Int64?
        /// When the token was stored: a clock that reads earlier (set back) must not see it as usable.
        let cachedAt: Int64
        /// The granted scopes as one space-separated string: split only when asked for (most callers never do).
        let target: String
        let tokenType: String
        let refreshRecommended: Bool
        /// The lookup this answer came from, whose companions give the account.
        let lookup: SilentLookupResult?

        init(
            accessToken: Secret, expiresOn: Int64, refreshOn: Int64?, cachedAt: Int64, target: String, tokenType: String, refreshRecommended: Bool,
            lookup: SilentLookupResult?
        ) {
            self.accessToken = accessToken
            self.expiresOn = expiresOn
            self.refreshOn = refreshOn
            self.cachedAt = cachedAt
            self.target = target
            self.tokenType = tokenType
            self.refreshRecommended = refreshRecommended
            self.lookup = lookup
        }
    }

    private let fields: Fields

    /// Where the token came from.
    public internal(set) var source: Source

    /// The access token. Its `description` is redacted; ``value`` is the token itself.
    public var accessToken: Secret { fields.accessToken }
    /// When the token expires, in Unix seconds.
    public var expiresOn: Int64 { fields.expiresOn }
    /// When a refresh is recommended (`refresh_in`), in Unix seconds.
    public var refreshOn: Int64? { fields.refreshOn }
    /// When the token was stored, in Unix seconds.
    public var cachedAt: Int64 { fields.cachedAt }
    /// The token's scopes, as granted.
    public var scopes: [String] { fields.target.split(separator: " ").map(String.init) }
    /// `Bearer`, or the type of a proof-of-possession token.
    public var tokenType: String { fields.tokenType }
    /// The token's `refresh_on` has passed. ``TokenClient/token(for:refresh:)`` has started a refresh in the
    /// background already; the token is still usable.
    public var refreshRecommended: Bool { fields.refreshRecommended }

    /// The access token itself, to send as `Authorization: Bearer <value>`.
    public var value: String { fields.accessToken.reveal() }

    /// The signed-in account the token is for, with its ID token's claims; nil for an app token or when the cache
    /// holds no Account record for it. Read on first access (one short read of the store), then kept.
    public var account: AccountInfo? {
        get throws {
            guard let companions = try fields.lookup?.companions else { return nil }
            guard let account = companions.account?.entity else { return nil }
            return AccountInfo(account: account, idToken: companions.idToken?.entity)
        }
    }

    /// A result from its parts, with no account (tests).
    init(accessToken: Secret, expiresOn: Int64, refreshOn: Int64?, scopes: [String], tokenType: String, source: Source, cachedAt: Int64 = .min) {
        fields = Fields(
            accessToken: accessToken, expiresOn: expiresOn, refreshOn: refreshOn, cachedAt: cachedAt, target: scopes.joined(separator: " "),
            tokenType: tokenType,
            refreshRecommended: false, lookup: nil
        )
        self.source = source
    }

    /// The answer of a lookup whose outcome is a hit.
    init?(hit lookup: SilentLookupResult, source: Source) {
        guard let token = lookup.accessToken?.entity else { return nil }
        fields = Fields(
            accessToken: token.secret, expiresOn: token.expiresOn, refreshOn: token.refreshOn, cachedAt: token.cachedAt, target: token.target,
            tokenType: token.tokenType ?? "Bearer",
            refreshRecommended: lookup.refreshRecommended, lookup: lookup
        )
        self.source = source
    }
}
