/// One tenant profile of a signed-in user (`Account` section): one record per
/// (home account, environment, realm), so a guest tenant adds a second record under the same home account.
public struct Account: CacheEntity {
    /// The record kind: ``EntityKind/account``.
    public static let kind = EntityKind.account

    /// `uid.utid` (AAD, MSA) or the id_token `sub` (ADFS).
    public var homeAccountID: String
    /// The authority host the profile was obtained from, e.g. `login.microsoftonline.com`.
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
    /// The id_token `name` claim: the display name.
    public var name: String?
    /// The id_token `given_name` claim.
    public var givenName: String?
    /// The id_token `family_name` claim.
    public var familyName: String?
    /// The id_token `middle_name` claim.
    public var middleName: String?
    /// MSAL's `alternative_account_id`: another id of the user that some SDKs record. Never derived here; kept as
    /// written.
    public var alternativeAccountID: String?
    /// Raw base64url `client_info`.
    public var clientInfo: String?
    /// Fields this library does not model, preserved verbatim.
    public var additionalFields: [String: JSONValue]

    /// An account profile. Storing it requires a non-empty home account id, environment and authority type.
    @inlinable
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

    /// What identifies an account profile: home account, environment and realm.
    public struct Key: Sendable, Hashable {
        /// `uid.utid` or the ADFS `sub`. Compared ASCII-case-insensitively.
        public var homeAccountID: String
        /// The authority host. Compared ASCII-case-insensitively.
        public var environment: String
        /// The tenant id of the profile. Compared ASCII-case-insensitively.
        public var realm: String

        /// The key of the profile of `homeAccountID` in `realm` under `environment`.
        public init(homeAccountID: String, environment: String, realm: String) {
            self.homeAccountID = homeAccountID
            self.environment = environment
            self.realm = realm
        }
    }

    /// This profile's identity.
    public var key: Key { Key(homeAccountID: homeAccountID, environment: environment, realm: realm) }
}
