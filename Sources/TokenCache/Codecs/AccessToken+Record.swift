package import TokenCacheRecords

extension AccessToken: StorableEntity {
    package static let modelledFieldNames: Set<String> = [
        "home_account_id", "environment", "client_id", "realm", "target", "secret", "cached_at", "expires_on",
        "extended_expires_on", "refresh_on", "token_type", "key_id", "user_assertion_hash", "ext_cache_key",
    ]

    package func encodeFields() -> FieldMap {
        var encoder = FieldEncoder()
        encoder.setCredential("AccessToken", homeAccountID: homeAccountID, environment: environment, clientID: clientID, secret: secret)
        encoder.set("realm", realm)
        encoder.set("target", target)
        encoder.set("cached_at", cachedAt)
        encoder.set("expires_on", expiresOn)
        encoder.set("extended_expires_on", extendedExpiresOn)
        encoder.set("refresh_on", refreshOn)
        encoder.set("token_type", tokenType)
        encoder.set("key_id", keyID)
        encoder.set("user_assertion_hash", userAssertionHash)
        encoder.set("ext_cache_key", extendedCacheKey)
        encoder.merge(additionalFields)
        return encoder.map
    }

    package init(decoding fields: FieldTable) throws(FormatError) {
        self = try Self.decoded(from: fields, homeAccountID: nil, environment: nil, clientID: nil, realm: nil)
    }

    /// Decoding for a lookup: fields equal to the identifiers the caller already holds (a query's account, host,
    /// client and realm: the usual case) share its strings, so a hit copies only what the caller does not hold.
    ///
    /// A function that returns the token it builds rather than an initializer that delegates to the memberwise one,
    /// which, declared in another module than the type, cost a lookup hit more reference-count operations (measured by
    /// `make instructions`).
    static func decoded(
        from fields: FieldTable, homeAccountID knownAccount: String?, environment knownEnvironment: String?,
        clientID knownClient: String?, realm knownRealm: String?
    ) throws(FormatError) -> AccessToken {
        var decoder = FieldDecoder(fields, kind: Self.kind)
        // Taken in name order, so that each field is where the previous one ended (see FieldDecoder).
        let cachedAt = try decoder.integer("cached_at")
        let clientID = try decoder.string("client_id", reusing: knownClient)
        decoder.consumeCredentialType()
        let environment = try decoder.string("environment", reusing: knownEnvironment)
        let expiresOn = try decoder.integer("expires_on")
        let extendedCacheKey = try decoder.optionalString("ext_cache_key")
        let extendedExpiresOn = try decoder.optionalInteger("extended_expires_on")
        let homeAccountID = try decoder.string("home_account_id", reusing: knownAccount)
        let keyID = try decoder.optionalString("key_id")
        let realm = try decoder.string("realm", reusing: knownRealm)
        let refreshOn = try decoder.optionalInteger("refresh_on")
        let secret = try decoder.secret("secret")
        let target = try decoder.string("target")
        let tokenType = try decoder.optionalString("token_type")
        let userAssertionHash = try decoder.optionalString("user_assertion_hash")
        let additionalFields = try decoder.additionalFields()
        return AccessToken(
            homeAccountID: homeAccountID, environment: environment, clientID: clientID, realm: realm, target: target, secret: secret,
            cachedAt: cachedAt, expiresOn: expiresOn, extendedExpiresOn: extendedExpiresOn, refreshOn: refreshOn,
            tokenType: tokenType, keyID: keyID, userAssertionHash: userAssertionHash, extendedCacheKey: extendedCacheKey,
            additionalFields: additionalFields
        )
    }

    /// The lookup summary: enough to pick a candidate (environment, scopes, times) without the token.
    package func summaryFields() -> FieldMap? {
        var encoder = FieldEncoder()
        encoder.set("environment", environment)
        encoder.set("target", (try? ScopeSet(parsing: target))?.canonical ?? "")
        encoder.set("cached_at", cachedAt)
        encoder.set("expires_on", expiresOn)
        encoder.set("refresh_on", refreshOn)
        return encoder.map
    }

    package func validate() throws(TokenCacheError) {
        // Client-credential (app) tokens have no home account.
        try Self.validateCredential(homeAccountID: nil, environment: environment, clientID: clientID, secret: secret)
        try Self.requireNonEmpty(target, "target")
        do { _ = try ScopeSet(parsing: target) } catch let error as TokenCacheError {
            throw TokenCacheError(.invalidArgument, "AccessToken.target: \(error.message)")
        } catch { throw TokenCacheError(.invalidArgument, "AccessToken.target is invalid") }
        if let extendedCacheKey, !extendedCacheKey.isEmpty {
            do { _ = try ExtendedCacheKey(extendedCacheKey) } catch { throw TokenCacheError(.invalidArgument, "AccessToken.ext_cache_key: \(error.message)") }
        }
        try validateAdditionalFields()
    }

    package var homeAccountIDForIndex: String? { homeAccountID }
    package var clientIDForFilter: String? { clientID }
}
