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
        encoder.setCredential("IdToken", homeAccountID: homeAccountID, environment: environment, clientID: clientID, secret: secret)
        encoder.set("realm", realm)
        encoder.merge(additionalFields)
        return encoder.map
    }

    init(decoding fields: FieldTable) throws(FormatError) {
        var decoder = FieldDecoder(fields, kind: Self.kind)
        let credential = try decoder.credential()
        self.init(
            homeAccountID: credential.homeAccountID, environment: credential.environment, clientID: credential.clientID,
            realm: try decoder.string("realm"),
            secret: credential.secret,
            additionalFields: try decoder.additionalFields()
        )
    }

    func validate() throws(TokenCacheError) {
        try Self.validateCredential(homeAccountID: homeAccountID, environment: environment, clientID: clientID, secret: secret)
        try validateAdditionalFields()
    }

    var homeAccountIDForIndex: String? { homeAccountID }
    var clientIDForFilter: String? { clientID }
}
