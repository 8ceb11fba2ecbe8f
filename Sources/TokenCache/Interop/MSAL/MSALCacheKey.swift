internal import TokenCacheRecords
/// The entry keys the writer gives each kind: lower-cased, every component present, in the shape MSAL Python
/// and .NET compute from the fields.
///
/// Readers of every SDK either ignore keys (.NET rebuilds them, Go matches on values) or use them for a fast path
/// and for modifying an entry (Python), or pre-filter on substrings of them (JS, which needs them lower-cased and
/// containing the account, client, realm and scopes). Components are joined with `-`; an absent one is empty, so
/// an app token's key starts with `-`. Lower-casing is ASCII-only (``ASCII``), as the engine's identifiers are.
///
/// | Kind | Key |
/// |---|---|
/// | AccessToken | `hid-env-accesstoken-client-realm-target`, for bound tokens (PoP, SSH certificate) too: MSAL Python finds an access token first by this key, case-insensitively, and only then by a case-sensitive scan, so another key shape would change its answers. A bound token whose key another token of the file already has gets `-<token type>-<key id>` appended (``distinguishedKey(of:)``) |
/// | RefreshToken | `hid-env-refreshtoken-<family id or client id>--`: the .NET shape. Python's adds the target, but then a family token and the same client's own token (two records here) could get one key, and Python recomputes keys anyway |
/// | IdToken | `hid-env-idtoken-client-realm-` |
/// | Account | `hid-env-realm` |
/// | AppMetadata | `appmetadata-env-client` |
enum MSALCacheKey {
    /// The credential type the writer records for an access token: `AccessToken` for Bearer, the JS/ObjC
    /// `AccessToken_With_AuthScheme` for bound (PoP, SSH-cert) tokens. JS looks bound tokens up by this type and
    /// would otherwise hand a PoP token to a Bearer request; .NET, Python and Go do not filter on it.
    static func credentialType(of token: AccessToken) -> String {
        isBearer(token.tokenType) ? "AccessToken" : "AccessToken_With_AuthScheme"
    }

    /// Absent, empty or `bearer` in any case.
    static func isBearer(_ tokenType: String?) -> Bool {
        guard let tokenType, !tokenType.isEmpty else { return true }
        return ASCII.equalIgnoringCase(tokenType, "bearer")
    }

    static func key(of token: AccessToken) -> String {
        joined([token.homeAccountID, token.environment, "accesstoken", token.clientID, token.realm, token.target])
    }

    /// The key of a bound token that shares ``key(of:)-(AccessToken)`` with another token: the token type and the key
    /// id appended, as .NET appends the token type. Nil for a Bearer token, which keeps the plain key.
    static func distinguishedKey(of token: AccessToken) -> String? {
        guard !isBearer(token.tokenType), let tokenType = token.tokenType else { return nil }
        return key(of: token) + "-" + tokenType.asciiLowercased + "-" + (token.keyID ?? "")
    }

    static func key(of token: RefreshToken) -> String {
        let owner: String
        switch token.owner {
        case .client(let client): owner = client
        case .family(let family): owner = family
        }
        return joined([token.homeAccountID, token.environment, "refreshtoken", owner, "", ""])
    }

    static func key(of token: IDToken) -> String {
        joined([token.homeAccountID, token.environment, "idtoken", token.clientID, token.realm, ""])
    }

    static func key(of account: Account) -> String {
        joined([account.homeAccountID, account.environment, account.realm])
    }

    static func key(of metadata: AppMetadata) -> String {
        joined(["appmetadata", metadata.environment, metadata.clientID])
    }

    static func key(of entity: MSALEntity) -> String {
        switch entity {
        case .accessToken(let token): key(of: token)
        case .refreshToken(let token): key(of: token)
        case .idToken(let token): key(of: token)
        case .account(let account): key(of: account)
        case .appMetadata(let metadata): key(of: metadata)
        }
    }

    private static func joined(_ parts: [String]) -> String { parts.joined(separator: "-").asciiLowercased }
}
