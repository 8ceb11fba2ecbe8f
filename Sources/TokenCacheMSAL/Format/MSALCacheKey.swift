internal import TokenCache
internal import TokenCacheRecords
/// The entry keys the writer gives each kind: the key MSAL Python's key maker derives from the entry's own fields.
///
/// Why Python's: MSAL Python (Azure CLI, Azure Identity: the consumers of an export on Linux) finds an entry to
/// modify or remove by recomputing its key from its fields. An entry under any other key is still found by its
/// scans, but its `remove_account`, `remove_rt` and `update_rt` miss it: sign-out leaves the token behind and a
/// rotation adds the new token beside the redeemed one. The other SDKs do not need their own shape: .NET rebuilds
/// every key from the fields on load, Go matches on values, and JS pre-filters on substrings (the account, client,
/// realm and scopes, lower-cased) that these keys contain; Docs/Semantics.md says what each one can then do.
///
/// Components are joined with `-`; an absent one is empty, so an app token's key starts with `-`. Lower-casing is
/// ASCII-only (``ASCII``), as the engine's identifiers are.
///
/// | Kind | Key |
/// |---|---|
/// | AccessToken | `hid-env-accesstoken-client-realm-target`, lower-cased, for bound tokens (PoP, SSH certificate) too; with an extended cache key `hid-env-atext-client-realm-target-extkey` |
/// | RefreshToken | `hid-env-refreshtoken-client--target`, lower-cased: the client that obtained it, also for a family token, and its `target` (empty when it has none, which is then also the .NET key) |
/// | IdToken | `hid-env-idtoken-client-realm-`, lower-cased |
/// | Account | `hid-env-realm`, lower-cased |
/// | AppMetadata | `appmetadata-env-client`, **not** lower-cased (Python does not lower-case it) |
///
/// Two records can derive one key only in a way MSAL Python itself cannot hold (it would write the second over the
/// first): a bound access token beside a token of the same scopes, or a family refresh token beside the same
/// client's own token of the same target. The second then takes ``distinguishedKey(of:)-(MSALEntity)``.
enum MSALCacheKey {
    /// Absent, empty or `bearer` in any case.
    static func isBearer(_ tokenType: String?) -> Bool {
        guard let tokenType, !tokenType.isEmpty else { return true }
        return ASCII.equalIgnoringCase(tokenType, "bearer")
    }

    static func key(of token: AccessToken) -> String {
        if let extended = token.extendedCacheKey, !extended.isEmpty {
            return joined([token.homeAccountID, token.environment, "atext", token.clientID, token.realm, token.target, extended])
        }
        return joined([token.homeAccountID, token.environment, "accesstoken", token.clientID, token.realm, token.target])
    }

    /// The key of a bound or on-behalf-of token that shares ``key(of:)-(AccessToken)`` with another token: the token
    /// type and the key id appended, as .NET appends the token type, then the on-behalf-of partition. Nil for a plain
    /// Bearer token, which keeps the plain key. MSAL Python finds such a token by its scan but cannot modify or remove
    /// it.
    static func distinguishedKey(of token: AccessToken) -> String? {
        var suffix = ""
        if !isBearer(token.tokenType), let tokenType = token.tokenType { suffix += "-" + tokenType.asciiLowercased + "-" + (token.keyID ?? "") }
        if let partition = token.userAssertionHash, !partition.isEmpty { suffix += "-" + partition }
        return suffix.isEmpty ? nil : key(of: token) + suffix
    }

    static func key(of token: RefreshToken) -> String {
        joined([token.homeAccountID, token.environment, "refreshtoken", token.clientID, "", token.target ?? ""])
    }

    /// The key of a family refresh token that shares ``key(of:)-(RefreshToken)`` with the same client's own token:
    /// the .NET family key (`hid-env-refreshtoken-<family id>--`), which no key of Python's shape equals unless a
    /// client id is the family id. Nil for a client's own token, which keeps the plain key. MSAL Python finds such a
    /// token by its scan but cannot modify or remove it.
    static func distinguishedKey(of token: RefreshToken) -> String? {
        let partition = token.userAssertionHash.flatMap { $0.isEmpty ? nil : "-" + $0 }
        guard case .family(let family) = token.owner else { return partition.map { key(of: token) + $0 } }
        return joined([token.homeAccountID, token.environment, "refreshtoken", family, "", ""]) + (partition ?? "")
    }

    /// The key a record takes when another record of the export derives its ``key(of:)-(MSALEntity)``; nil for
    /// the kinds and records that keep their key (the other one of such a pair).
    static func distinguishedKey(of entity: MSALEntity) -> String? {
        switch entity {
        case .accessToken(let token): distinguishedKey(of: token)
        case .refreshToken(let token): distinguishedKey(of: token)
        case .idToken, .account, .appMetadata: nil
        }
    }

    static func key(of token: IDToken) -> String {
        joined([token.homeAccountID, token.environment, "idtoken", token.clientID, token.realm, ""])
    }

    static func key(of account: Account) -> String {
        joined([account.homeAccountID, account.environment, account.realm])
    }

    static func key(of metadata: AppMetadata) -> String {
        ["appmetadata", metadata.environment, metadata.clientID].joined(separator: "-")
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
