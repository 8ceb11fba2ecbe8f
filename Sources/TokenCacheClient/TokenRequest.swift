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

    /// A request for the app's own token in `authority`'s tenant (client credentials): no account, no refresh token;
    /// scopes are usually a resource's `/.default`. Obtained with ``TokenClient/token(for:acquire:)``, whose closure
    /// makes the client-credentials call (with the extra parameters `extendedCacheKey` was made from, if any). The
    /// authority names the tenant (not `common`).
    public static func app(
        clientID: String, authority: Authority, scopes: [String], extendedCacheKey: ExtendedCacheKey? = nil, forceRefresh: Bool = false
    ) -> TokenRequest {
        TokenRequest(clientID: clientID, homeAccountID: "", authority: authority, scopes: scopes, extendedCacheKey: extendedCacheKey, forceRefresh: forceRefresh)
    }

    /// A web API's request for a token to call another API on behalf of its caller: the tokens of `partition` only —
    /// ``OnBehalfOfKey/init(assertion:)`` of the caller's incoming token, or a long-running process's own key —
    /// whatever the account. With ``TokenClient/token(for:acquire:)``, whose closure makes the on-behalf-of exchange
    /// of the caller's assertion: the cache, then the exchange. With ``TokenClient/token(for:)`` (a long-running process
    /// that no longer has the assertion): the cache, then the partition's refresh token, then the caller must come back.
    /// The authority names the tenant (for a caller, its token's `tid`).
    public static func onBehalfOf(
        _ partition: OnBehalfOfKey, clientID: String, authority: Authority, scopes: [String], forceRefresh: Bool = false
    ) -> TokenRequest {
        TokenRequest(clientID: clientID, homeAccountID: "", authority: authority, scopes: scopes, onBehalfOf: partition, forceRefresh: forceRefresh)
    }

    /// The grant an acquisition for this request makes, as stored in the context of its response: the on-behalf-of
    /// exchange for a partition's request, client credentials for a request without an account, else none named.
    var acquisitionGrantType: String? {
        if onBehalfOf != nil { return "urn:ietf:params:oauth:grant-type:jwt-bearer" }
        return homeAccountID.isEmpty ? "client_credentials" : nil
    }

    /// The key of the access token an acquisition for this request stores (its scopes as the request names them):
    /// what the lease on acquiring it is named by, so that equal requests anywhere share one.
    var acquiredTokenKey: AccessToken.Key {
        AccessToken.Key(
            homeAccountID: homeAccountID, environment: authority.host, clientID: clientID, realm: authority.tenant,
            target: (try? ScopeSet.request(scopes).canonical) ?? scopes.joined(separator: " "), tokenType: tokenType, keyID: keyID,
            extendedCacheKey: extendedCacheKey?.value, userAssertionHash: onBehalfOf?.value
        )
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
    var flightKey: FlightKey { flightKey(acquiring: false) }

    /// ``flightKey`` of a request made with an acquire closure, or without: the two never share a flight, so that a
    /// caller that can acquire never gets the answer of one that could only redeem (nor the other way round).
    func flightKey(acquiring: Bool) -> FlightKey {
        FlightKey(
            clientID: IdentifierCase.folded(clientID), homeAccountID: IdentifierCase.folded(homeAccountID),
            host: IdentifierCase.folded(authority.host), tenant: IdentifierCase.folded(authority.tenant),
            scopes: (try? ScopeSet.request(scopes).normalized) ?? scopes, tokenType: tokenType.map(IdentifierCase.folded), keyID: keyID,
            extendedCacheKey: extendedCacheKey?.value, onBehalfOf: onBehalfOf?.value, forced: forceRefresh, acquiring: acquiring
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
    var acquiring: Bool
}
