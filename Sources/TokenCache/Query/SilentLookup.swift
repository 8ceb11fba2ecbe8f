/// What a silent token request asks the cache (issue 3; msal-cache-semantics.md §6).
public struct SilentLookupQuery: Sendable, Hashable {
    public var clientID: String
    public var homeAccountID: String
    /// Any host of the wanted cloud: tokens are matched by alias group, not by string.
    public var environment: String
    /// A tenant id, or `common` / `organizations` / `consumers` (then the account's home tenant is tried too).
    public var realm: String
    public var scopes: [String]
    /// nil means Bearer.
    public var tokenType: String?
    public var keyID: String?
    /// Unix seconds.
    public var now: Int64

    public init(
        clientID: String, homeAccountID: String, environment: String, realm: String, scopes: [String],
        tokenType: String? = nil, keyID: String? = nil, now: Int64
    ) {
        self.clientID = clientID
        self.homeAccountID = homeAccountID
        self.environment = environment
        self.realm = realm
        self.scopes = scopes
        self.tokenType = tokenType
        self.keyID = keyID
        self.now = now
    }

    /// A query whose environment and realm come from an authority URL.
    public init(
        clientID: String, homeAccountID: String, authority: Authority, scopes: [String], tokenType: String? = nil,
        keyID: String? = nil, now: Int64
    ) {
        self.init(
            clientID: clientID, homeAccountID: homeAccountID, environment: authority.host, realm: authority.tenant,
            scopes: scopes, tokenType: tokenType, keyID: keyID, now: now
        )
    }
}

/// The cache's answer to a silent request.
public struct SilentLookupResult: Sendable {
    public enum Outcome: String, Sendable, Hashable {
        /// A usable access token: at least 300 s left and not cached in the future.
        case hit
        /// No usable access token, but a refresh token to redeem.
        case refresh
        /// Neither: the user must sign in.
        case interactionRequired = "interaction_required"
    }

    /// What the cache knows of the client's membership in the family of client ids (from its app metadata).
    public enum FamilyMembership: String, Sendable, Hashable {
        /// App metadata names a family: the family refresh token is the client's to use.
        case member
        /// App metadata exists without a family: only the client's own refresh token is offered.
        case notMember = "not_member"
        /// No app metadata: a family refresh token is offered on trial. If redeeming it fails (e.g.
        /// `client_mismatch`), the caller must not delete it — it belongs to other clients (msal-cache-semantics §6.7).
        case unknown
    }

    public var outcome: Outcome
    public var familyMembership: FamilyMembership
    /// The access token's refresh_on has passed: use it, and refresh in the background.
    public var refreshRecommended: Bool
    public var accessToken: StoredEntity<AccessToken>?
    /// The refresh token that would be redeemed (family first when the client may use it), whatever the outcome.
    public var refreshToken: StoredEntity<RefreshToken>?
    public var idToken: StoredEntity<IDToken>?
    public var account: StoredEntity<Account>?
    /// Damaged records met on the way; they were skipped (treated as absent), never returned.
    public var corrupt: [CorruptRecord]
}
