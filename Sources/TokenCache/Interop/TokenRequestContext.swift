/// What the auth client asked for when it received a ``TokenResponse``: needed to derive the cache entities.
public struct TokenRequestContext: Sendable {
    /// The client id that made the request; becomes the tokens' and app metadata's `client_id`.
    public var clientID: String
    /// The authority the request went to: its host becomes `environment`, its tenant the realm (for `common`,
    /// `organizations` or `consumers`, the id_token's `tid` when there is one).
    public var authority: Authority
    /// The scopes requested; the stored target when the response has no `scope`. Each element may itself hold
    /// several space-separated scopes.
    public var requestedScopes: [String]
    /// The OAuth grant, e.g. `authorization_code`, `refresh_token`, `client_credentials`,
    /// `urn:ietf:params:oauth:grant-type:device_code`. Stored as the account's `account_source`;
    /// `client_credentials` makes the tokens app tokens (no account).
    public var grantType: String?
    /// Unix seconds: the time the response was received. Must be in 0 ... 253402300799 (year 9999).
    public var now: Int64
    /// The extended cache key of a request sent with extra body parameters (``ExtendedCacheKey/init(parameters:)``):
    /// the access token is stored under it and answers only queries with the same key. nil for an ordinary request.
    public var extendedCacheKey: ExtendedCacheKey?
    /// The on-behalf-of partition of a request made for a caller (grant `urn:ietf:params:oauth:grant-type:jwt-bearer`
    /// with the caller's assertion, or a refresh within the partition): the access and refresh tokens are stored in it
    /// and answer only requests of the same partition. nil for an ordinary request.
    public var onBehalfOf: OnBehalfOfKey?

    /// The request's context; `now` must be in the range given for ``now``.
    public init(
        clientID: String, authority: Authority, requestedScopes: [String], grantType: String? = nil, now: Int64,
        extendedCacheKey: ExtendedCacheKey? = nil, onBehalfOf: OnBehalfOfKey? = nil
    ) {
        self.clientID = clientID
        self.authority = authority
        self.requestedScopes = requestedScopes
        self.grantType = grantType
        self.now = now
        self.extendedCacheKey = extendedCacheKey
        self.onBehalfOf = onBehalfOf
    }
}
