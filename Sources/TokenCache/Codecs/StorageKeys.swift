package import TokenCacheRecords

/// Canonical scope string for keys: the normalized set joined by spaces (or the lower-cased text if it does not
/// parse, which `validate` prevents for stored records).
func canonicalTarget(_ target: String) -> String {
    (try? ScopeSet(parsing: target))?.canonical ?? target.asciiLowercased
}

// The storage key of each kind (FORMAT.md §4.3). Identifiers are ASCII-lower-cased; key ids and on-behalf-of keys
// are exact.

/// The 16-byte prefix of a token's records: its on-behalf-of partition `O(uah)` when it has one, else its account
/// `P(hid)` (FORMAT.md §4.3). A partition's tokens are found by the partition alone, whoever the account.
package func tokenOwnerPrefix(homeAccountID: String, userAssertionHash: String?, index: BlindIndex) -> [UInt8] {
    onBehalfOfPrefix(userAssertionHash, index: index) ?? index.accountPrefix(homeAccountID)
}

/// `O(uah)`: the prefix of the tokens of one on-behalf-of partition; nil for none (nil or empty).
package func onBehalfOfPrefix(_ userAssertionHash: String?, index: BlindIndex) -> [UInt8]? {
    guard let userAssertionHash, !userAssertionHash.isEmpty else { return nil }
    return index.digest("obo", exact: userAssertionHash)
}
extension Account {
    package static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        storageKey(accountPrefix: index.accountPrefix(key.homeAccountID), environment: key.environment, realm: key.realm, index: index)
    }

    /// The key under an account prefix already computed (a lookup derives `P(hid)` once).
    static func storageKey(accountPrefix: [UInt8], environment: String, realm: String, index: BlindIndex) -> [UInt8] {
        index.digest("account-entry", environment, realm, after: accountPrefix)
    }
}

extension AccessToken {
    /// The bucket is what a silent lookup knows exactly; the environment (matched by alias group) and the
    /// scopes (matched as a subset) are resolved inside the bucket.
    /// Tokens with an extended cache key have buckets of their own, under another label, so that a query sees only
    /// the tokens of its own key (none, or one) in one range read. `accountPrefix` is the token's owner prefix
    /// (``tokenOwnerPrefix(homeAccountID:userAssertionHash:index:)``).
    static func bucketPrefix(
        accountPrefix: [UInt8], clientID: String, realm: String, tokenType: String?, keyID: String?, extendedCacheKey: String?, index: BlindIndex
    ) -> [UInt8] {
        if let extendedCacheKey, !extendedCacheKey.isEmpty {
            return index.digest("at-bucket-ext", clientID, realm, canonicalTokenType(tokenType), extendedCacheKey, exact: keyID ?? "", after: accountPrefix)
        }
        return index.digest("at-bucket", clientID, realm, canonicalTokenType(tokenType), exact: keyID ?? "", after: accountPrefix)
    }

    /// The bucket of the token with `key`.
    package static func bucketPrefix(for key: Key, index: BlindIndex) -> [UInt8] {
        bucketPrefix(
            accountPrefix: tokenOwnerPrefix(homeAccountID: key.homeAccountID, userAssertionHash: key.userAssertionHash, index: index),
            clientID: key.clientID, realm: key.realm, tokenType: key.tokenType, keyID: key.keyID, extendedCacheKey: key.extendedCacheKey,
            index: index
        )
    }

    package static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        entryKey(for: key, bucket: bucketPrefix(for: key, index: index), index: index)
    }

    /// The entry key of `key` in its bucket, `bucket` already computed.
    package static func entryKey(for key: Key, bucket: [UInt8], index: BlindIndex) -> [UInt8] {
        index.digest("at-entry", key.environment, canonicalTarget(key.target), after: bucket)
    }
}

extension RefreshToken {
    static func ownerPrefix(homeAccountID: String, owner: Owner, index: BlindIndex) -> [UInt8] {
        ownerPrefix(accountPrefix: index.accountPrefix(homeAccountID), owner: owner, index: index)
    }

    static func ownerPrefix(accountPrefix: [UInt8], owner: Owner, index: BlindIndex) -> [UInt8] {
        switch owner {
        case .client(let clientID): index.digest("rt-owner", "client", clientID, after: accountPrefix)
        case .family(let familyID): index.digest("rt-owner", "family", familyID, after: accountPrefix)
        }
    }

    package static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        storageKey(
            for: key, accountPrefix: tokenOwnerPrefix(homeAccountID: key.homeAccountID, userAssertionHash: key.userAssertionHash, index: index),
            index: index
        )
    }

    /// The key under its owner prefix already computed (``tokenOwnerPrefix(homeAccountID:userAssertionHash:index:)``).
    static func storageKey(for key: Key, accountPrefix: [UInt8], index: BlindIndex) -> [UInt8] {
        index.digest("rt-entry", key.environment, after: ownerPrefix(accountPrefix: accountPrefix, owner: key.owner, index: index))
    }
}

extension IDToken {
    /// The ID tokens of one (account, client, realm), across environments.
    static func ownerPrefix(homeAccountID: String, clientID: String, realm: String, index: BlindIndex) -> [UInt8] {
        ownerPrefix(accountPrefix: index.accountPrefix(homeAccountID), clientID: clientID, realm: realm, index: index)
    }

    static func ownerPrefix(accountPrefix: [UInt8], clientID: String, realm: String, index: BlindIndex) -> [UInt8] {
        index.digest("idt-owner", clientID, realm, after: accountPrefix)
    }

    package static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        storageKey(for: key, accountPrefix: index.accountPrefix(key.homeAccountID), index: index)
    }

    /// The key under an account prefix already computed.
    static func storageKey(for key: Key, accountPrefix: [UInt8], index: BlindIndex) -> [UInt8] {
        let owner = ownerPrefix(accountPrefix: accountPrefix, clientID: key.clientID, realm: key.realm, index: index)
        return index.digest("idt-entry", key.environment, after: owner)
    }
}

extension AppMetadata {
    static func clientPrefix(_ clientID: String, index: BlindIndex) -> [UInt8] {
        index.digest("app", clientID)
    }

    package static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        index.digest("app-entry", key.environment, after: clientPrefix(key.clientID, index: index))
    }
}
