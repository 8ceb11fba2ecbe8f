public import TokenCache

/// An access token that answers a ``TokenRequest``, with what an app wants to know beside it.
public struct TokenResult: Sendable {
    /// Where the token came from.
    public enum Source: String, Sendable, Hashable {
        /// The cache held it.
        case cache
        /// The caller's refresh closure redeemed a refresh token for it, just now, in this call or in the refresh
        /// this call joined.
        case refresh
    }

    /// The access token. Its `description` is redacted; ``value`` is the token itself.
    public let accessToken: Secret
    /// When the token expires, in Unix seconds.
    public let expiresOn: Int64
    /// When a refresh is recommended (`refresh_in`), in Unix seconds.
    public let refreshOn: Int64?
    /// The token's scopes, as granted.
    public let scopes: [String]
    /// `Bearer`, or the type of a proof-of-possession token.
    public let tokenType: String
    /// The token's `refresh_on` has passed. ``TokenCacheClient/token(for:refresh:)`` has started a refresh in the
    /// background already; the token is still usable.
    public let refreshRecommended: Bool
    /// Where the token came from.
    public internal(set) var source: Source
    /// The lookup this answer came from, whose companions give the account.
    private let lookup: SilentLookupResult?

    /// The access token itself, to send as `Authorization: Bearer <value>`.
    public var value: String { accessToken.reveal() }

    /// The signed-in account the token is for, with its ID token's claims; nil for an app token or when the cache
    /// holds no Account record for it. Read on first access (one short read of the store), then kept.
    public var account: AccountInfo? {
        get throws {
            guard let companions = try lookup?.companions else { return nil }
            guard let account = companions.account?.entity else { return nil }
            return AccountInfo(account: account, idToken: companions.idToken?.entity)
        }
    }

    /// A result from its parts, with no account (tests).
    init(accessToken: Secret, expiresOn: Int64, refreshOn: Int64?, scopes: [String], tokenType: String, source: Source) {
        self.accessToken = accessToken
        self.expiresOn = expiresOn
        self.refreshOn = refreshOn
        self.scopes = scopes
        self.tokenType = tokenType
        refreshRecommended = false
        self.source = source
        lookup = nil
    }

    /// The answer of a lookup whose outcome is a hit.
    init?(hit lookup: SilentLookupResult, source: Source) {
        guard let token = lookup.accessToken?.entity else { return nil }
        accessToken = token.secret
        expiresOn = token.expiresOn
        refreshOn = token.refreshOn
        scopes = token.target.split(separator: " ").map(String.init)
        tokenType = token.tokenType ?? "Bearer"
        refreshRecommended = lookup.refreshRecommended
        self.source = source
        self.lookup = lookup
    }
}
