/// An OpenID Connect ID token (`IdToken` section): the raw JWT, per account, client and tenant.
public struct IDToken: CacheEntity {
    public static let kind = EntityKind.idToken

    public var homeAccountID: String
    public var environment: String
    public var clientID: String
    public var realm: String
    /// The raw JWT.
    public var secret: Secret
    public var additionalFields: [String: JSONValue]

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

    public struct Key: Sendable, Hashable {
        public var homeAccountID: String
        public var environment: String
        public var clientID: String
        public var realm: String

        public init(homeAccountID: String, environment: String, clientID: String, realm: String) {
            self.homeAccountID = homeAccountID
            self.environment = environment
            self.clientID = clientID
            self.realm = realm
        }
    }

    public var key: Key {
        Key(homeAccountID: homeAccountID, environment: environment, clientID: clientID, realm: realm)
    }
}

extension IDToken: StorableEntity {
    static let modelledFieldNames: Set<String> = ["home_account_id", "environment", "client_id", "realm", "secret"]

    func encodeFields() -> FieldMap {
        var encoder = FieldEncoder()
        encoder.set("credential_type", "IdToken")
        encoder.set("home_account_id", homeAccountID)
        encoder.set("environment", environment)
        encoder.set("client_id", clientID)
        encoder.set("realm", realm)
        encoder.set("secret", secret)
        encoder.merge(additionalFields)
        return encoder.map
    }

    init(decoding fields: FieldMap) throws(FormatError) {
        var decoder = FieldDecoder(fields, kind: Self.kind)
        decoder.skip("credential_type")
        self.init(
            homeAccountID: try decoder.string("home_account_id"),
            environment: try decoder.string("environment"),
            clientID: try decoder.string("client_id"),
            realm: try decoder.string("realm"),
            secret: try decoder.secret("secret"),
            additionalFields: try decoder.additionalFields()
        )
    }

    func validate() throws(TokenCacheError) {
        try Self.requireNonEmpty(homeAccountID, "homeAccountID")
        try Self.requireNonEmpty(environment, "environment")
        try Self.requireNonEmpty(clientID, "clientID")
        if secret.isEmpty { throw TokenCacheError(.invalidArgument, "IDToken.secret must not be empty") }
        try validateAdditionalFields()
    }

    var homeAccountIDForIndex: String? { homeAccountID }
    var clientIDForFilter: String? { clientID }
}
