internal import TokenCacheStorage

/// What a silent token request asks the cache (Docs/Semantics.md, "Access-token lookup and candidate order").
public struct SilentLookupQuery: Sendable, Hashable {
    /// The requesting application's client id.
    public var clientID: String
    /// The signed-in user's home account id (`uid.utid`); empty for an app token.
    public var homeAccountID: String
    /// Any host of the wanted cloud: tokens are matched by alias group, not by string.
    public var environment: String
    /// A tenant id, or `common` / `organizations` / `consumers` (then the account's home tenant is tried too).
    public var realm: String
    /// The scopes requested; each element may hold several space-separated scopes. `openid`, `profile` and
    /// `offline_access` are dropped, and what is left must not be empty.
    public var scopes: [String]
    /// nil means Bearer.
    public var tokenType: String?
    /// The key id a proof-of-possession token must be bound to; nil for Bearer.
    public var keyID: String?
    /// The extended cache key of a request sent with extra body parameters (``ExtendedCacheKey``): only tokens stored
    /// with the same key answer it. nil sees only tokens stored without one.
    public var extendedCacheKey: ExtendedCacheKey?
    /// The on-behalf-of partition to look in (``OnBehalfOfKey``): its access and refresh tokens answer, found by the
    /// partition alone (``homeAccountID`` may then be empty; when given, it only names the account whose ID token and
    /// profile are read). nil looks at the account's own tokens, never at a partition's.
    public var onBehalfOf: OnBehalfOfKey?
    /// Unix seconds.
    public var now: Int64
    /// When a hit's companions (refresh token, ID token, account, family membership) are read.
    public var companionLoading: CompanionLoading

    /// A query for an explicit environment and realm. `now` is the caller's clock, in Unix seconds.
    public init(
        clientID: String, homeAccountID: String, environment: String, realm: String, scopes: [String],
        tokenType: String? = nil, keyID: String? = nil, extendedCacheKey: ExtendedCacheKey? = nil, onBehalfOf: OnBehalfOfKey? = nil,
        now: Int64, companionLoading: CompanionLoading = .onFirstAccess
    ) {
        self.clientID = clientID
        self.homeAccountID = homeAccountID
        self.environment = environment
        self.realm = realm
        self.scopes = scopes
        self.tokenType = tokenType
        self.keyID = keyID
        self.extendedCacheKey = extendedCacheKey
        self.onBehalfOf = onBehalfOf
        self.now = now
        self.companionLoading = companionLoading
    }

    /// A query whose environment and realm come from an authority URL.
    public init(
        clientID: String, homeAccountID: String, authority: Authority, scopes: [String], tokenType: String? = nil,
        keyID: String? = nil, extendedCacheKey: ExtendedCacheKey? = nil, onBehalfOf: OnBehalfOfKey? = nil, now: Int64,
        companionLoading: CompanionLoading = .onFirstAccess
    ) {
        self.init(
            clientID: clientID, homeAccountID: homeAccountID, environment: authority.host, realm: authority.tenant,
            scopes: scopes, tokenType: tokenType, keyID: keyID, extendedCacheKey: extendedCacheKey, onBehalfOf: onBehalfOf, now: now,
            companionLoading: companionLoading
        )
    }
}

/// The cache's answer to a silent request.
public struct SilentLookupResult: Sendable {
    /// What the caller should do next.
    public enum Outcome: String, Sendable, Hashable {
        /// A usable access token: at least 300 s left and not cached in the future.
        case hit
        /// No usable access token, but a refresh token to redeem.
        case refresh
        /// Neither, or the token endpoint refused the refresh token (a refusal record names its revision; it is still
        /// in ``SilentLookupResult/refreshToken``): the user must sign in.
        case interactionRequired = "interaction_required"
    }

    /// What the cache knows of the client's membership in the family of client ids (from its app metadata).
    public enum FamilyMembership: String, Sendable, Hashable {
        /// App metadata names a family: the family refresh token is the client's to use.
        case member
        /// App metadata exists without a family: only the client's own refresh token is offered.
        case notMember = "not_member"
        /// No app metadata: a family refresh token is offered on trial. If redeeming it fails (e.g.
        /// `client_mismatch`), the caller must not delete it — it belongs to other clients (Docs/Semantics.md,
        /// "Refresh tokens and families").
        case unknown
    }

    /// Whether the cache holds a usable access token, only a refresh token, or neither.
    public let outcome: Outcome
    /// The access token's refresh_on has passed: use it, and refresh in the background.
    public let refreshRecommended: Bool
    /// The access token to use: set for ``Outcome/hit``, nil otherwise.
    public let accessToken: StoredEntity<AccessToken>?
    /// The commit the lookup read (``TokenStore/lastCommitID`` as it was for this snapshot): while the store's last
    /// commit id still equals it, a lookup would answer the same, which lets a caller keep the answer.
    public let snapshotID: Int
    /// The buckets the lookup read, on a backend that versions its records by bucket.
    let bucketStamp: BucketStamp?
    /// What the lookup read, finer than ``snapshotID`` on a shared store: while ``TokenStore/isCurrent(_:)`` says it
    /// holds, a lookup would answer the same.
    public var stamp: AnswerStamp { AnswerStamp(snapshotID: snapshotID, buckets: bucketStamp) }
    /// Damaged access tokens the bucket scan skipped.
    let accessTokenCorrupt: [CorruptRecord]
    let companionSource: CompanionSource

    init(
        outcome: Outcome, refreshRecommended: Bool, accessToken: StoredEntity<AccessToken>?, accessTokenCorrupt: [CorruptRecord],
        companions: CompanionSource, snapshotID: Int, bucketStamp: BucketStamp?
    ) {
        self.snapshotID = snapshotID
        self.bucketStamp = bucketStamp
        self.outcome = outcome
        self.refreshRecommended = refreshRecommended
        self.accessToken = accessToken
        self.accessTokenCorrupt = accessTokenCorrupt
        self.companionSource = companions
    }

    /// The refresh token to redeem, the ID token, the account and the family membership. For a hit looked up with
    /// ``CompanionLoading/onFirstAccess`` they are read on the first call (once; later calls and copies of the result
    /// share what it read), which is why this can throw (a storage failure, as any read).
    public var companions: SilentLookupCompanions {
        get throws {
            switch companionSource {
            case .loaded(let companions): companions
            case .deferred(let deferred): try deferred.load()
            }
        }
    }

    /// The refresh token that would be redeemed (family first when the client may use it), whatever the outcome.
    public var refreshToken: StoredEntity<RefreshToken>? { get throws { try companions.refreshToken } }
    /// The account's ID token for this client (``SilentLookupCompanions/idToken``).
    public var idToken: StoredEntity<IDToken>? { get throws { try companions.idToken } }
    /// The account's tenant profile (``SilentLookupCompanions/account``).
    public var account: StoredEntity<Account>? { get throws { try companions.account } }
    /// Whether the client is known to be in the family of client ids (``SilentLookupCompanions/familyMembership``).
    public var familyMembership: FamilyMembership { get throws { try companions.familyMembership } }

    /// Damaged records met on the way (the access-token scan's and the companions'); they were skipped (treated
    /// as absent), never returned. Reads the companions if they are not read yet.
    public var corrupt: [CorruptRecord] { get throws { accessTokenCorrupt + (try companions.corrupt) } }
}

/// When the companions of a hit (refresh token, ID token, account, family membership) are read.
///
/// A hit needs only the access token; the companions live in three other databases, and reading them costs
/// about as much again as the hit itself. Outcomes other than a hit depend on the refresh token, so their
/// companions are always read with the lookup. A store whose backend reads by plan (a shared store on a server)
/// fetches them with the lookup whatever is asked: the lookup's one round trip brings them, and a second would
/// cost more than it saves.
public enum CompanionLoading: String, Sendable, Hashable, CaseIterable {
    /// On the first access to any of them, all together in one read transaction of their own. When no write
    /// committed since the lookup, that transaction sees exactly the lookup's snapshot; otherwise it sees the newer
    /// state (a rotated refresh token, a sign-out), and ``SilentLookupCompanions/fromLookupSnapshot`` is false.
    case onFirstAccess = "on_first_access"
    /// In the lookup's own transaction: everything from one snapshot, at the cost of reading it all on every hit.
    case withLookup = "with_lookup"
}

/// What a silent request gets besides the access token.
public struct SilentLookupCompanions: Sendable {
    /// What app metadata says of the client's family membership; decides which refresh token is offered.
    public var familyMembership: SilentLookupResult.FamilyMembership
    /// The refresh token that would be redeemed (family first when the client may use it).
    public var refreshToken: StoredEntity<RefreshToken>?
    /// The account's ID token for this client, from the first candidate realm that has one (the token's realm first).
    public var idToken: StoredEntity<IDToken>?
    /// The account's tenant profile, from the first candidate realm that has one (the token's realm first).
    public var account: StoredEntity<Account>?
    /// Damaged records met while reading these; skipped, never returned.
    public var corrupt: [CorruptRecord]
    /// Whether these come from the snapshot the access token was read in (see ``CompanionLoading``).
    public var fromLookupSnapshot: Bool
}

/// Where a result's companions come from.
enum CompanionSource: Sendable {
    case loaded(SilentLookupCompanions)
    case deferred(DeferredCompanions)
}
