public import TokenCache

/// A signed-in user as an app shows it: who it is, from its Account record and its ID token's claims.
public struct AccountInfo: Sendable, Hashable {
    /// The home account id shared by every tenant profile of the user: `uid.utid`, or the ID token's `sub` (ADFS).
    public var homeAccountID: String
    /// The cloud host the account signed in to, e.g. `login.microsoftonline.com`.
    public var environment: String
    /// The tenant of this profile (the home tenant's, when the user has several).
    public var realm: String
    /// The username, usually an email address (`preferred_username`, else `upn`, else `email`).
    public var username: String?
    /// The user's display name (`name`).
    public var name: String?
    /// The object id of the user in the profile's tenant (`oid`, else `sub`).
    public var localAccountID: String?
    /// The claims of the account's ID token for the client asked about (empty when the cache holds none).
    public var claims: AccountClaims

    init(account: Account, idToken: IDToken?) {
        homeAccountID = account.homeAccountID
        environment = account.environment
        realm = account.realm
        username = account.username
        name = account.name
        localAccountID = account.localAccountID
        claims = AccountClaims(idToken?.claims ?? [:])
        // An ID token knows what an account written from a response without one does not.
        if name == nil { name = claims.name }
        if username == nil { username = claims.preferredUsername }
    }
}

/// The claims of an ID token, decoded without verifying its signature: the token came from the token endpoint over
/// TLS, to the client that redeemed it, and a cache makes no trust decision from it. Personal data: don't log it.
public struct AccountClaims: Sendable, Hashable {
    /// Every claim by name.
    public let all: [String: JSONValue]

    /// The claims given; for tests and for apps that decoded an ID token themselves.
    public init(_ claims: [String: JSONValue]) { all = claims }

    /// Any claim by name, e.g. `claims["groups"]`.
    public subscript(name: String) -> JSONValue? { all[name] }

    /// `name`: the display name.
    public var name: String? { string("name") }
    /// `preferred_username`, else `upn`, else `email`: what MSAL calls the username.
    public var preferredUsername: String? { string("preferred_username") ?? string("upn") ?? string("email") }
    /// `oid`: the user's object id in the token's tenant.
    public var objectID: String? { string("oid") }
    /// `tid`: the tenant that issued the token.
    public var tenantID: String? { string("tid") }
    /// `sub`: the subject, unique per user and application.
    public var subject: String? { string("sub") }
    /// `iat`: when the ID token was issued, in Unix seconds.
    public var issuedAt: Int64? {
        switch all["iat"] {
        case .integer(let value)?: value
        case .double(let value)? where value.isFinite: Int64(exactly: value.rounded(.down))
        default: nil
        }
    }

    private func string(_ name: String) -> String? {
        guard case .string(let value)? = all[name], !value.isEmpty else { return nil }
        return value
    }
}
