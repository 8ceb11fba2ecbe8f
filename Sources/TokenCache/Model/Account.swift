/// One tenant profile of a signed-in user (`Account` section): one record per
/// (home account, environment, realm), so a guest tenant adds a second record under the same home account.
public struct Account: CacheEntity {
    public static let kind = EntityKind.account

    /// `uid.utid` (AAD, MSA) or the id_token `sub` (ADFS).
    public var homeAccountID: String
    public var environment: String
    /// The tenant of this profile.
    public var realm: String
    /// `oid`, else `sub`.
    public var localAccountID: String?
    /// `preferred_username`, else `upn`, else `email`. Personal data: shown by `cachetool inspect`, encrypted on disk.
    public var username: String?
    /// `MSSTS`, `ADFS`, `MSA`, `Other`.
    public var authorityType: String
    /// The grant that created the account (MSAL Python writes e.g. `authorization_code`).
    public var accountSource: String?
    public var name: String?
    public var givenName: String?
    public var familyName: String?
    public var middleName: String?
    public var alternativeAccountID: String?
    /// Raw base64url `client_info`.
    public var clientInfo: String?
    public var additionalFields: [String: JSONValue]

    public init(
        homeAccountID: String, environment: String, realm: String, localAccountID: String? = nil,
        username: String? = nil, authorityType: String = "MSSTS", accountSource: String? = nil, name: String? = nil,
        givenName: String? = nil, familyName: String? = nil, middleName: String? = nil,
        alternativeAccountID: String? = nil, clientInfo: String? = nil, additionalFields: [String: JSONValue] = [:]
    ) {
        self.homeAccountID = homeAccountID
        self.environment = environment
        self.realm = realm
        self.localAccountID = localAccountID
        self.username = username
        self.authorityType = authorityType
        self.accountSource = accountSource
        self.name = name
        self.givenName = givenName
        self.familyName = familyName
        self.middleName = middleName
        self.alternativeAccountID = alternativeAccountID
        self.clientInfo = clientInfo
        self.additionalFields = additionalFields
    }

    public struct Key: Sendable, Hashable {
        public var homeAccountID: String
        public var environment: String
        public var realm: String

        public init(homeAccountID: String, environment: String, realm: String) {
            self.homeAccountID = homeAccountID
            self.environment = environment
            self.realm = realm
        }
    }

    public var key: Key { Key(homeAccountID: homeAccountID, environment: environment, realm: realm) }
}

extension Account: StorableEntity {
    static let modelledFieldNames: Set<String> = [
        "home_account_id", "environment", "realm", "local_account_id", "username", "authority_type",
        "account_source", "name", "given_name", "family_name", "middle_name", "alternative_account_id", "client_info",
    ]

    func encodeFields() -> FieldMap {
        var encoder = FieldEncoder()
        encoder.set("home_account_id", homeAccountID)
        encoder.set("environment", environment)
        encoder.set("realm", realm)
        encoder.set("local_account_id", localAccountID)
        encoder.set("username", username)
        encoder.set("authority_type", authorityType)
        encoder.set("account_source", accountSource)
        encoder.set("name", name)
        encoder.set("given_name", givenName)
        encoder.set("family_name", familyName)
        encoder.set("middle_name", middleName)
        encoder.set("alternative_account_id", alternativeAccountID)
        encoder.set("client_info", clientInfo)
        encoder.merge(additionalFields)
        return encoder.map
    }

    init(decoding fields: FieldTable) throws(FormatError) {
        var decoder = FieldDecoder(fields, kind: Self.kind)
        self.init(
            homeAccountID: try decoder.string("home_account_id"),
            environment: try decoder.string("environment"),
            realm: try decoder.string("realm"),
            localAccountID: try decoder.optionalString("local_account_id"),
            username: try decoder.optionalString("username"),
            authorityType: try decoder.string("authority_type"),
            accountSource: try decoder.optionalString("account_source"),
            name: try decoder.optionalString("name"),
            givenName: try decoder.optionalString("given_name"),
            familyName: try decoder.optionalString("family_name"),
            middleName: try decoder.optionalString("middle_name"),
            alternativeAccountID: try decoder.optionalString("alternative_account_id"),
            clientInfo: try decoder.optionalString("client_info"),
            additionalFields: try decoder.additionalFields()
        )
    }

    func validate() throws(TokenCacheError) {
        try Self.requireNonEmpty(homeAccountID, "homeAccountID")
        try Self.requireNonEmpty(environment, "environment")
        try Self.requireNonEmpty(authorityType, "authorityType")
        try validateAdditionalFields()
    }

    var homeAccountIDForIndex: String? { homeAccountID }
    var clientIDForFilter: String? { nil }
}
