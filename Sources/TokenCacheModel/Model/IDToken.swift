/// An OpenID Connect ID token (`IdToken` section): the raw JWT, per account, client and tenant.
public struct IDToken: CacheEntity {
    /// The record kind: ``EntityKind/idToken``.
    public static let kind = EntityKind.idToken

    /// `uid.utid`, or the id_token `sub` (ADFS).
    public var homeAccountID: String
    /// The authority host, e.g. `login.microsoftonline.com`.
    public var environment: String
    /// The client the token was issued to (`client_id`).
    public var clientID: String
    /// The tenant id that issued the token.
    public var realm: String
    /// The raw JWT.
    public var secret: Secret
    /// Fields this library does not model, preserved verbatim.
    public var additionalFields: [String: JSONValue]

    /// An ID token. Storing it requires a non-empty home account id, environment, client id and secret.
    @inlinable
    public init(
        homeAccountID: String, environment: String, clientID: String, realm: String, secret: Secret,
        additionalFields: [String: JSONValue] = [:]
    ) {
        self.homeAccountID = homeAccountID
        self.environment = environment
        self.clientID = clientID
        self.realm = realm
        self.secret = secret
        self.additionalFields = additionalFields
    }

    /// What identifies an ID token: account, environment, client and realm.
    public struct Key: Sendable, Hashable {
        /// `uid.utid` or the ADFS `sub`. Compared ASCII-case-insensitively.
        public var homeAccountID: String
        /// The authority host. Compared ASCII-case-insensitively.
        public var environment: String
        /// The client id. Compared ASCII-case-insensitively.
        public var clientID: String
        /// The tenant id. Compared ASCII-case-insensitively.
        public var realm: String

        /// The key of the ID token with these identifying fields.
        public init(homeAccountID: String, environment: String, clientID: String, realm: String) {
            self.homeAccountID = homeAccountID
            self.environment = environment
            self.clientID = clientID
            self.realm = realm
        }
    }

    /// This token's identity.
    public var key: Key {
        Key(homeAccountID: homeAccountID, environment: environment, clientID: clientID, realm: realm)
    }
}
