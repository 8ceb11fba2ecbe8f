/// What one token response becomes, exactly as MSAL would derive it (Docs/Semantics.md, "Ingesting a token response").
///
/// - **home_account_id**: `uid.utid` from `client_info`; without `client_info`, the id_token `sub` (ADFS);
///   empty for client-credential tokens (grant `client_credentials`, or a response with neither `client_info` nor
///   an id_token). A response with an id_token but neither `client_info` nor a `sub` claim is rejected: there is
///   no way to name its account.
/// - **environment**: the authority host. **realm**: the authority tenant, except for `common`, `organizations`
///   and `consumers`, where the id_token `tid` is stored (MSAL .NET and JS); with no `tid` to be had (no id_token,
///   or no `tid` claim) the authority tenant is kept, as MSAL Python and Go always do, so the token stays findable
///   by a query for that same authority.
/// - **target**: the response `scope` (server casing and order; whitespace runs collapse to single spaces), else
///   the requested scopes joined by single spaces. It must parse as a ``ScopeSet`` and not be empty.
/// - **times**: `cached_at = now`, `expires_on = now + expires_in`,
///   `extended_expires_on = now + (ext_expires_in ?? expires_in)`, `refresh_on = now + refresh_in` when present.
/// - **access token**: `token_type` as the server sent it (nil when absent, which readers take as Bearer).
/// - **refresh token** (user tokens only): `family_id` = `foci` when non-empty, the same target,
///   `last_modification_time = now`, no realm.
/// - **ID token** and **account** (user tokens with an id_token only): realm as the access token's. Account:
///   username = `preferred_username`, `upn`, `email`; local_account_id = `oid`, `sub`; authority_type `ADFS` for an
///   ADFS authority else `MSSTS`; account_source = the grant type; names from the claims; the raw `client_info`.
///   A response without an id_token yields no account, so it cannot clobber a stored one.
/// - **app metadata**: always; `family_id` = `foci` when non-empty, else nil (a later response without `foci`
///   clears the family).
struct DerivedEntities: Sendable {
    var accessToken: AccessToken
    var refreshToken: RefreshToken?
    var idToken: IDToken?
    /// nil when there is no id_token (an id_token-less response must not clobber an account).
    var account: Account?
    var appMetadata: AppMetadata

    /// The latest `now` accepted: 9999-12-31T23:59:59Z.
    static let latestNow: Int64 = 253_402_300_799

    /// - Throws: ``TokenCacheError`` `.invalidArgument` naming the offending field; nothing is derived.
    init(response: TokenResponse, context: TokenRequestContext) throws {
        try response.validate()
        guard !context.clientID.isEmpty else { throw TokenCacheError(.invalidArgument, "request clientID is empty") }
        guard (0...Self.latestNow).contains(context.now) else {
            throw TokenCacheError(.invalidArgument, "request now is outside 0 ... 253402300799 (year 9999)")
        }
        let authority = context.authority
        let now = context.now

        // Decode everything present before deciding anything: a malformed part rejects the whole response.
        let rawClientInfo = response.clientInfo.flatMap { $0.isEmpty ? nil : $0 }
        let clientInfo = try rawClientInfo.map { try ClientInfo(base64URL: $0) }
        let idToken = response.idToken.flatMap { $0.isEmpty ? nil : $0 }
        let claims = try idToken.map { try IDTokenClaims(jwt: $0) }

        let homeAccountID: String
        if context.grantType == "client_credentials" {
            homeAccountID = ""
        } else if let clientInfo {
            homeAccountID = clientInfo.homeAccountID
        } else if let claims {
            guard let sub = claims.sub else {
                throw TokenCacheError(.invalidArgument, "id_token has no sub claim and the response has no client_info")
            }
            homeAccountID = sub
        } else {
            homeAccountID = ""
        }
        let isUserToken = !homeAccountID.isEmpty

        let environment = authority.host
        let realm = authority.isTenantless ? (claims?.tid ?? authority.tenant) : authority.tenant
        let target = try Self.target(response: response.scope, requested: context.requestedScopes)
        let familyID = response.foci.flatMap { $0.isEmpty ? nil : $0 }

        accessToken = AccessToken(
            homeAccountID: homeAccountID, environment: environment, clientID: context.clientID, realm: realm,
            target: target, secret: response.accessToken, cachedAt: now, expiresOn: now + response.expiresIn,
            extendedExpiresOn: now + (response.extExpiresIn ?? response.expiresIn),
            refreshOn: response.refreshIn.map { now + $0 },
            tokenType: response.tokenType.flatMap { $0.isEmpty ? nil : $0 }, userAssertionHash: context.onBehalfOf?.value,
            extendedCacheKey: context.extendedCacheKey?.value
        )

        // A refresh token is kept for a user, or for an on-behalf-of partition (found by the partition, whatever the
        // account); an app token (client credentials) has none to keep.
        if isUserToken || context.onBehalfOf != nil, let secret = response.refreshToken, !secret.isEmpty {
            refreshToken = RefreshToken(
                homeAccountID: homeAccountID, environment: environment, clientID: context.clientID, secret: secret,
                familyID: familyID, target: target, realm: nil, lastModificationTime: now, userAssertionHash: context.onBehalfOf?.value
            )
        } else {
            refreshToken = nil
        }

        if isUserToken, let idToken, let claims {
            self.idToken = IDToken(
                homeAccountID: homeAccountID, environment: environment, clientID: context.clientID, realm: realm,
                secret: idToken
            )
            account = Account(
                homeAccountID: homeAccountID, environment: environment, realm: realm,
                localAccountID: claims.localAccountID, username: claims.username,
                authorityType: authority.isADFS ? "ADFS" : "MSSTS", accountSource: context.grantType,
                name: claims.name, givenName: claims.givenName, familyName: claims.familyName,
                middleName: claims.middleName, clientInfo: rawClientInfo
            )
        } else {
            self.idToken = nil
            account = nil
        }

        appMetadata = AppMetadata(clientID: context.clientID, environment: environment, familyID: familyID)
    }

    /// The response's scope (else the requested scopes) with whitespace runs collapsed, validated as a scope set.
    static func target(response scope: String?, requested: [String]) throws -> String {
        func words(_ text: String) -> [String] {
            text.utf8.split(whereSeparator: ScopeSet.isWhitespace).map { String(decoding: $0, as: UTF8.self) }
        }
        func check(_ text: String, _ field: String) throws -> ScopeSet {
            do { return try ScopeSet(parsing: text) } catch let error as TokenCacheError {
                throw TokenCacheError(.invalidArgument, "\(field): \(error.message)")
            }
        }
        if let scope, !(try check(scope, "token response scope")).isEmpty {
            return words(scope).joined(separator: " ")
        }
        let joined = requested.flatMap(words).joined(separator: " ")
        guard !(try check(joined, "request requestedScopes")).isEmpty else {
            throw TokenCacheError(.invalidArgument, "token response has no scope and the request has no requestedScopes")
        }
        return joined
    }
}
