/// An OAuth access token, as MSAL's unified cache stores it (`AccessToken` section).
public struct AccessToken: CacheEntity {
    /// The record kind: ``EntityKind/accessToken``.
    public static let kind = EntityKind.accessToken

    /// `uid.utid` for user tokens; empty for client-credential (app) tokens.
    public var homeAccountID: String
    /// The authority host, e.g. `login.microsoftonline.com`.
    public var environment: String
    /// The client the token was issued to (`client_id`).
    public var clientID: String
    /// The tenant.
    public var realm: String
    /// Space-separated scopes, in the server's casing and order.
    public var target: String
    /// The access token itself (`secret`).
    public var secret: Secret
    /// Unix seconds.
    public var cachedAt: Int64
    /// When the token expires (`expires_on`), Unix seconds; a lookup wants at least 300 s left.
    public var expiresOn: Int64
    /// `extended_expires_on`, Unix seconds: until when the token stays usable while the service is down. Stored,
    /// never used for a decision.
    public var extendedExpiresOn: Int64?
    /// `refresh_on`, Unix seconds: once passed, a lookup still returns the token but recommends a refresh.
    public var refreshOn: Int64?
    /// `Bearer` when nil; `pop`, `ssh-cert` for bound tokens.
    public var tokenType: String?
    /// Key binding of PoP / SSH-cert tokens (`key_id`; MSAL .NET and ObjC write `kid`, Go `keyid`).
    public var keyID: String?
    /// The on-behalf-of partition (`user_assertion_hash`, ``OnBehalfOfKey``): set for a token obtained on behalf of a
    /// caller's assertion, which is then stored and found by it, not by the home account, and answers only requests
    /// of the same partition. Part of the token's key; compared exactly.
    public var userAssertionHash: String?
    /// MSAL's extended cache key (`ext_cache_key`, ``ExtendedCacheKey``): set for a token obtained with extra request
    /// parameters (a federated managed identity path, forwarded client claims), which then answers only queries with
    /// the same key. Part of the token's key and bucket; compared ASCII-case-insensitively.
    public var extendedCacheKey: String?
    /// Fields this library does not model, preserved verbatim.
    public var additionalFields: [String: JSONValue]

    /// An access token. Storing it requires a non-empty environment, client id, secret and target, and a target made
    /// of valid scope tokens.
    @inlinable
    public init(
        homeAccountID: String, environment: String, clientID: String, realm: String, target: String,
        secret: Secret, cachedAt: Int64, expiresOn: Int64, extendedExpiresOn: Int64? = nil, refreshOn: Int64? = nil,
        tokenType: String? = nil, keyID: String? = nil, userAssertionHash: String? = nil, extendedCacheKey: String? = nil,
        additionalFields: [String: JSONValue] = [:]
    ) {
        self.homeAccountID = homeAccountID
        self.environment = environment
        self.clientID = clientID
        self.realm = realm
        self.target = target
        self.secret = secret
        self.cachedAt = cachedAt
        self.expiresOn = expiresOn
        self.extendedExpiresOn = extendedExpiresOn
        self.refreshOn = refreshOn
        self.tokenType = tokenType
        self.keyID = keyID
        self.userAssertionHash = userAssertionHash
        self.extendedCacheKey = extendedCacheKey
        self.additionalFields = additionalFields
    }

    /// What identifies an access token: MSAL's key components. Scopes compare as a normalized set.
    public struct Key: Sendable, Hashable {
        /// `uid.utid`; empty for an app token. Compared ASCII-case-insensitively.
        public var homeAccountID: String
        /// The authority host. Compared ASCII-case-insensitively.
        public var environment: String
        /// The client id. Compared ASCII-case-insensitively.
        public var clientID: String
        /// The tenant id. Compared ASCII-case-insensitively.
        public var realm: String
        /// The space-separated scopes, compared as a normalized ``ScopeSet``.
        public var target: String
        /// nil or empty means Bearer. Compared ASCII-case-insensitively.
        public var tokenType: String?
        /// The proof-of-possession key id, compared byte for byte; nil for Bearer.
        public var keyID: String?
        /// The extended cache key; nil or empty for none. Compared ASCII-case-insensitively.
        public var extendedCacheKey: String?
        /// The on-behalf-of partition (`user_assertion_hash`); nil or empty for none. Compared exactly.
        public var userAssertionHash: String?

        /// The key of the access token with these identifying fields.
        public init(
            homeAccountID: String, environment: String, clientID: String, realm: String, target: String,
            tokenType: String? = nil, keyID: String? = nil, extendedCacheKey: String? = nil, userAssertionHash: String? = nil
        ) {
            self.homeAccountID = homeAccountID
            self.environment = environment
            self.clientID = clientID
            self.realm = realm
            self.target = target
            self.tokenType = tokenType
            self.keyID = keyID
            self.extendedCacheKey = extendedCacheKey
            self.userAssertionHash = userAssertionHash
        }
    }

    /// This token's identity: account, environment, client, realm, scopes, token type, key id, extended cache key and
    /// on-behalf-of partition.
    public var key: Key {
        Key(
            homeAccountID: homeAccountID, environment: environment, clientID: clientID, realm: realm, target: target,
            tokenType: tokenType, keyID: keyID, extendedCacheKey: extendedCacheKey, userAssertionHash: userAssertionHash
        )
    }
}
