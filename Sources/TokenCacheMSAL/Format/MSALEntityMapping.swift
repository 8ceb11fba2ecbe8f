internal import TokenCache
internal import TokenCacheRecords
/// MSAL cache entries → the engine's entities, with every SDK's spelling and type quirk accepted.
///
/// Identity comes from the fields, never from the entry key: keys differ per SDK (JS ends Bearer keys in `--`,
/// .NET keeps Account keys in mixed case, Python puts the target in refresh-token keys) and are ambiguous to
/// split, so they are ignored, as MSAL .NET does on load.
///
/// Per kind (canonical names; ``MSALEntryFields`` matches the JS camelCase and Go spellings):
/// - every kind: environment required; unknown members kept in `additionalFields` as written.
/// - credentials: `client_id` and a non-empty `secret` required; `credential_type`, when present, must be one
///   that belongs in the section (compared ignoring case) and is not kept (the writer derives it).
/// - AccessToken: `target` required, a string or an array of scopes, with at least one scope;
///   `cached_at`, `expires_on` required; `home_account_id` absent, `null` or empty is an app token (empty
///   string); `realm` absent is empty (ADFS); `extended_expires_on`, else the legacy .NET `ext_expires_on`;
///   key id from `key_id`, `kid` or `keyid`; `token_type` absent means Bearer.
/// - RefreshToken: `home_account_id` required; `family_id`, `target`, `realm`, `last_modification_time`,
///   `user_assertion_hash`, `expires_on` optional.
/// - IdToken: `home_account_id` required; `realm` absent is empty.
/// - Account: `home_account_id`, `authority_type` required; `realm` absent is empty (.NET's ADFS accounts).
/// - AppMetadata: `client_id` required; `family_id` optional.
///
/// An access token's extended cache key comes from `ext_cache_key` (MSAL Python's and Go's hash string; the entry's
/// `credential_type` may then read `atext`). Not supported, reported with ``MSALImportError/Code/unsupported`` so an
/// importer can choose to skip them: .NET's extended tokens (an `ext` object of key components, type `ATExt`), whose
/// key is hashed another way, so that no query here could compute it.
enum MSALEntityMapping {
    /// The entity `entry` describes. Errors name the entry's section and key.
    static func entity(from entry: MSALCacheEntry) throws(MSALImportError) -> MSALEntity {
        guard case .entity(let kind) = entry.section else {
            throw MSALImportError(.notAnObject, "not an entity section", section: entry.sectionName, key: entry.key)
        }
        guard case .object(let members) = entry.value else {
            throw MSALImportError(.notAnObject, "the entry is not a JSON object", offset: entry.offset, section: entry.sectionName, key: entry.key)
        }
        do {
            var fields = MSALEntryFields(members)
            let entity: MSALEntity
            switch kind {
            case .accessToken: entity = .accessToken(try accessToken(&fields))
            case .refreshToken: entity = .refreshToken(try refreshToken(&fields))
            case .idToken: entity = .idToken(try idToken(&fields))
            case .account: entity = .account(try account(&fields))
            case .appMetadata: entity = .appMetadata(try appMetadata(&fields))
            }
            try validate(entity)
            return entity
        } catch {
            throw error.located(section: entry.sectionName, key: entry.key)
        }
    }

    /// The `credential_type` values each section accepts, ASCII-lower-cased.
    static let credentialTypes: [EntityKind: Set<String>] = [
        .accessToken: ["accesstoken", "accesstoken_with_authscheme"],
        .refreshToken: ["refreshtoken"],
        .idToken: ["idtoken"],
    ]

    private static func checkCredentialType(_ fields: inout MSALEntryFields, _ kind: EntityKind) throws(MSALImportError) {
        guard let type = try fields.optionalString("credential_type") else { return }
        if kind == .accessToken, type.asciiLowercased == "atext" {
            guard fields.contains("ext_cache_key") else {
                throw MSALImportError(.unsupported, "extended tokens without ext_cache_key (.NET's form) are not supported", field: "credential_type")
            }
            return
        }
        guard credentialTypes[kind]?.contains(type.asciiLowercased) ?? true else {
            throw MSALImportError(.invalidValue, "does not belong in this section", field: "credential_type")
        }
    }

    private static func rejectExtendedKey(_ fields: MSALEntryFields) throws(MSALImportError) {
        if fields.contains("ext") {
            throw MSALImportError(.unsupported, ".NET's extended cache key components are not supported", field: "ext")
        }
    }

    private static func extendedCacheKey(_ fields: inout MSALEntryFields) throws(MSALImportError) -> String? {
        guard let text = try fields.optionalString("ext_cache_key"), !text.isEmpty else { return nil }
        guard let key = try? ExtendedCacheKey(text) else {
            throw MSALImportError(
                .invalidValue, "is not an extended cache key (1 to \(ExtendedCacheKey.maximumLength) printable ASCII bytes)", field: "ext_cache_key"
            )
        }
        return key.value
    }

    private static func accessToken(_ fields: inout MSALEntryFields) throws(MSALImportError) -> AccessToken {
        try rejectExtendedKey(fields)
        try checkCredentialType(&fields, .accessToken)
        let homeAccountID = try fields.optionalString("home_account_id") ?? ""
        let environment = try fields.requiredString("environment")
        let clientID = try fields.requiredString("client_id")
        let realm = try fields.optionalString("realm") ?? ""
        guard let target = try fields.optionalTarget() else { throw MSALImportError(.missingField, "is required", field: "target") }
        guard (try? ScopeSet(parsing: target))?.isEmpty == false else {
            throw MSALImportError(.invalidValue, "holds no scope", field: "target")
        }
        let secret = try fields.secret()
        let cachedAt = try fields.requiredTimestamp("cached_at")
        let expiresOn = try fields.requiredTimestamp("expires_on")
        let extended = try fields.optionalTimestamp("extended_expires_on")
        let legacyExtended = try fields.optionalTimestamp("ext_expires_on")
        let refreshOn = try fields.optionalTimestamp("refresh_on")
        let tokenType = try fields.optionalString("token_type")
        let keyID = try fields.optionalString("key_id", aliases: ["kid"])
        let userAssertionHash = try fields.optionalString("user_assertion_hash")
        let extendedCacheKey = try extendedCacheKey(&fields)
        return AccessToken(
            homeAccountID: homeAccountID, environment: environment, clientID: clientID, realm: realm, target: target,
            secret: secret, cachedAt: cachedAt, expiresOn: expiresOn, extendedExpiresOn: extended ?? legacyExtended,
            refreshOn: refreshOn, tokenType: tokenType, keyID: keyID, userAssertionHash: userAssertionHash,
            extendedCacheKey: extendedCacheKey, additionalFields: try fields.remainingFields())
    }

    private static func refreshToken(_ fields: inout MSALEntryFields) throws(MSALImportError) -> RefreshToken {
        try rejectExtendedKey(fields)
        try checkCredentialType(&fields, .refreshToken)
        let homeAccountID = try fields.requiredString("home_account_id")
        let environment = try fields.requiredString("environment")
        let clientID = try fields.requiredString("client_id")
        let secret = try fields.secret()
        let familyID = try fields.optionalString("family_id")
        let target = try fields.optionalTarget()
        let realm = try fields.optionalString("realm")
        let lastModificationTime = try fields.optionalTimestamp("last_modification_time")
        let userAssertionHash = try fields.optionalString("user_assertion_hash")
        let expiresOn = try fields.optionalTimestamp("expires_on")
        return RefreshToken(
            homeAccountID: homeAccountID, environment: environment, clientID: clientID, secret: secret, familyID: familyID,
            target: target, realm: realm, lastModificationTime: lastModificationTime, userAssertionHash: userAssertionHash,
            expiresOn: expiresOn, additionalFields: try fields.remainingFields())
    }

    private static func idToken(_ fields: inout MSALEntryFields) throws(MSALImportError) -> IDToken {
        try checkCredentialType(&fields, .idToken)
        let homeAccountID = try fields.requiredString("home_account_id")
        let environment = try fields.requiredString("environment")
        let clientID = try fields.requiredString("client_id")
        let realm = try fields.optionalString("realm") ?? ""
        let secret = try fields.secret()
        return IDToken(
            homeAccountID: homeAccountID, environment: environment, clientID: clientID, realm: realm, secret: secret,
            additionalFields: try fields.remainingFields())
    }

    private static func account(_ fields: inout MSALEntryFields) throws(MSALImportError) -> Account {
        // Not an account field; claimed so that it cannot become an unknown field the store refuses.
        _ = try fields.take("credential_type")
        return Account(
            homeAccountID: try fields.requiredString("home_account_id"),
            environment: try fields.requiredString("environment"),
            realm: try fields.optionalString("realm") ?? "",
            localAccountID: try fields.optionalString("local_account_id"),
            username: try fields.optionalString("username"),
            authorityType: try fields.requiredString("authority_type"),
            accountSource: try fields.optionalString("account_source"),
            name: try fields.optionalString("name"),
            givenName: try fields.optionalString("given_name"),
            familyName: try fields.optionalString("family_name"),
            middleName: try fields.optionalString("middle_name"),
            alternativeAccountID: try fields.optionalString("alternative_account_id"),
            clientInfo: try fields.optionalString("client_info"),
            additionalFields: try fields.remainingFields())
    }

    private static func appMetadata(_ fields: inout MSALEntryFields) throws(MSALImportError) -> AppMetadata {
        _ = try fields.take("credential_type")
        return AppMetadata(
            clientID: try fields.requiredString("client_id"),
            environment: try fields.requiredString("environment"),
            familyID: try fields.optionalString("family_id"),
            additionalFields: try fields.remainingFields())
    }

    /// The store's own checks, so that everything this maps can be written: a backstop behind the field checks
    /// above (additional field names' length, and anything the model adds later).
    private static func validate(_ entity: MSALEntity) throws(MSALImportError) {
        do {
            switch entity {
            case .accessToken(let token): try token.validate()
            case .refreshToken(let token): try token.validate()
            case .idToken(let token): try token.validate()
            case .account(let account): try account.validate()
            case .appMetadata(let metadata): try metadata.validate()
            }
        } catch {
            throw MSALImportError(.invalidValue, "the store refuses the entity: \(error.message)")
        }
    }
}
