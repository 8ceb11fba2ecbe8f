/// An OAuth refresh token (`RefreshToken` section). Refresh tokens are cross-tenant: no realm in the key.
public struct RefreshToken: CacheEntity {
    /// The record kind: ``EntityKind/refreshToken``.
    public static let kind = EntityKind.refreshToken

    /// `uid.utid`, or the id_token `sub` (ADFS).
    public var homeAccountID: String
    /// The authority host, e.g. `login.microsoftonline.com`.
    public var environment: String
    /// The client that obtained the token (`client_id`).
    public var clientID: String
    /// The refresh token itself (`secret`).
    public var secret: Secret
    /// `"1"` for a family (FOCI) refresh token, usable by every client of the family.
    public var familyID: String?
    /// Scopes the token was issued with (MSAL Python writes it; it is not part of the identity).
    public var target: String?
    /// A tenant id some SDKs record; not part of the identity, and ingest writes none.
    public var realm: String?
    /// Unix seconds of the last change (MSAL Python tries newer refresh tokens first).
    public var lastModificationTime: Int64?
    /// The on-behalf-of partition (`user_assertion_hash`, ``OnBehalfOfKey``), when obtained on behalf of a caller's
    /// assertion: the token is then stored and found by it, and redeemed only for requests of that partition. Part of
    /// the token's key; compared exactly.
    public var userAssertionHash: String?
    /// Unix seconds; only some writers know a refresh token's expiry.
    public var expiresOn: Int64?
    /// Fields this library does not model, preserved verbatim.
    public var additionalFields: [String: JSONValue]

    /// A refresh token. Storing it requires a non-empty home account id, environment, client id and secret, and a
    /// `target` (if any) made of valid scope tokens.
    @inlinable
    public init(
        homeAccountID: String, environment: String, clientID: String, secret: Secret, familyID: String? = nil,
        target: String? = nil, realm: String? = nil, lastModificationTime: Int64? = nil,
        userAssertionHash: String? = nil, expiresOn: Int64? = nil, additionalFields: [String: JSONValue] = [:]
    ) {
        self.homeAccountID = homeAccountID
        self.environment = environment
        self.clientID = clientID
        self.secret = secret
        self.familyID = familyID
        self.target = target
        self.realm = realm
        self.lastModificationTime = lastModificationTime
        self.userAssertionHash = userAssertionHash
        self.expiresOn = expiresOn
        self.additionalFields = additionalFields
    }

    /// Who may redeem a refresh token: one client, or every member of a family.
    public enum Owner: Sendable, Hashable {
        case client(String)
        case family(String)
    }

    /// A refresh token is identified by account, environment, owner (client or family) and on-behalf-of partition.
    public struct Key: Sendable, Hashable {
        /// `uid.utid` or the ADFS `sub`. Compared ASCII-case-insensitively.
        public var homeAccountID: String
        /// The authority host. Compared ASCII-case-insensitively.
        public var environment: String
        /// The client or family that owns the token. Compared ASCII-case-insensitively.
        public var owner: Owner
        /// The on-behalf-of partition; nil or empty for none. Compared exactly.
        public var userAssertionHash: String?

        /// The key of the refresh token of `owner` for this account and environment (in an on-behalf-of partition).
        public init(homeAccountID: String, environment: String, owner: Owner, userAssertionHash: String? = nil) {
            self.homeAccountID = homeAccountID
            self.environment = environment
            self.owner = owner
            self.userAssertionHash = userAssertionHash
        }
    }

    /// The family when ``familyID`` is non-empty, else the client.
    public var owner: Owner {
        if let familyID, !familyID.isEmpty { return .family(familyID) }
        return .client(clientID)
    }

    /// This token's identity.
    public var key: Key { Key(homeAccountID: homeAccountID, environment: environment, owner: owner, userAssertionHash: userAssertionHash) }
}
