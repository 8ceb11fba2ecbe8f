public import TokenCache

/// What ``TokenClient/token(for:refresh:)`` is asked for: a token of one account, for one client, from one
/// authority, with these scopes.
public struct TokenRequest: Sendable, Hashable {
    /// The requesting application's client id.
    public var clientID: String
    /// The signed-in user's home account id (``AccountInfo/homeAccountID``).
    public var homeAccountID: String
    /// The authority the token is for: its host picks the cloud (by alias group), its tenant the realm.
    public var authority: Authority
    /// The scopes wanted; `openid`, `profile` and `offline_access` don't count, and something else must be asked.
    public var scopes: [String]
    /// nil for Bearer; `pop` for a proof-of-possession token bound to ``keyID``.
    public var tokenType: String?
    /// The key id a proof-of-possession token must be bound to; nil for Bearer.
    public var keyID: String?
    /// The extended cache key of a request sent with extra body parameters (``ExtendedCacheKey/init(parameters:)``):
    /// only tokens stored under it answer, and a refreshed token is stored under it. nil for an ordinary request.
    public var extendedCacheKey: ExtendedCacheKey?
    /// The on-behalf-of partition of a web API's request for its caller (``OnBehalfOfKey``): only the partition's
    /// tokens answer, its refresh token is the one redeemed, and the refreshed tokens are stored in it. nil for a
    /// user's own request.
    public var onBehalfOf: OnBehalfOfKey?
    /// Skip the cached access token and redeem the refresh token (after the resource rejected the token, say).
    public var forceRefresh: Bool

    /// A request for a user's token.
    public init(
        clientID: String, homeAccountID: String, authority: Authority, scopes: [String], tokenType: String? = nil,
        keyID: String? = nil, extendedCacheKey: ExtendedCacheKey? = nil, onBehalfOf: OnBehalfOfKey? = nil, forceRefresh: Bool = false
    ) {
        self.clientID = clientID
        self.homeAccountID = homeAccountID
        self.authority = authority
        self.scopes = scopes
        self.tokenType = tokenType
        self.keyID = keyID
        self.extendedCacheKey = extendedCacheKey
        self.onBehalfOf = onBehalfOf
        self.forceRefresh = forceRefresh
    }

    /// A request for a token of an account the client listed (``TokenClient/accounts(clientID:environment:username:)``).
    public init(clientID: String, account: AccountInfo, authority: Authority, scopes: [String], forceRefresh: Bool = false) {
        self.init(clientID: clientID, homeAccountID: account.homeAccountID, authority: authority, scopes: scopes, forceRefresh: forceRefresh)
    }

    /// The store's query for this request at `now`.
    func query(now: Int64) -> SilentLookupQuery {
        SilentLookupQuery(
            clientID: clientID, homeAccountID: homeAccountID, authority: authority, scopes: scopes, tokenType: tokenType,
            keyID: keyID, extendedCacheKey: extendedCacheKey, onBehalfOf: onBehalfOf, now: now
        )
    }

    /// What identifies the refresh this request may need: requests with equal keys share one refresh in a process.
    /// Two requests share a key exactly when the store would treat them as one: identifiers and scopes fold ASCII
    /// case only (as the store's keys do), and the scopes are the store's own request set (``ScopeSet``: order,
    /// repetition and the scopes that don't count don't matter). Scopes the store refuses are kept as given, so such
    /// a request shares no refresh with a valid one and gets the store's error. Forced refreshes share theirs only
    /// with each other: a caller that rejected the stored token must not be handed the result of a refresh that may
    /// return that same token.
    var flightKey: FlightKey {
        FlightKey(
            clientID: IdentifierCase.folded(clientID), homeAccountID: IdentifierCase.folded(homeAccountID),
            host: IdentifierCase.folded(authority.host), tenant: IdentifierCase.folded(authority.tenant),
            scopes: (try? ScopeSet.request(scopes).normalized) ?? scopes, tokenType: tokenType.map(IdentifierCase.folded), keyID: keyID,
            extendedCacheKey: extendedCacheKey?.value, onBehalfOf: onBehalfOf?.value, forced: forceRefresh
        )
    }
}

/// The identity of one refresh (``TokenRequest/flightKey``).
struct FlightKey: Hashable, Sendable {
    var clientID: String
    var homeAccountID: String
    var host: String
    var tenant: String
    var scopes: [String]
    var tokenType: String?
    var keyID: String?
    var extendedCacheKey: String?
    var onBehalfOf: String?
    var forced: Bool
}
