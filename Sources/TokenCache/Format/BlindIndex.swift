internal import TokenCacheSodium

/// Keyed hashing of identifiers into storage keys (FORMAT.md §4), so that no home account id, client id,
/// realm, environment or scope is readable in any file.
///
/// `H(label, f1, …, fn) = BLAKE2b-128(key = index_key, enc(label, f1, …, fn))` with
/// `enc(x1, …) = u32be(len x1) ‖ x1 ‖ …`. The length prefixes make `("a", "bc")` and `("ab", "c")` distinct,
/// which MSAL's `-`-joined keys are not.
struct BlindIndex: Sendable {
    let key: SecureKey

    func digest(_ label: String, _ fields: String...) -> [UInt8] {
        digest(label, fields)
    }

    func digest(_ label: String, _ fields: [String]) -> [UInt8] {
        var input: [UInt8] = []
        input.reserveCapacity(64)
        for part in CollectionOfOne(label) + fields {
            let bytes = part.utf8
            withUnsafeBytes(of: UInt32(bytes.count).bigEndian) { input.append(contentsOf: $0) }
            input.append(contentsOf: bytes)
        }
        // SAFETY of try!: the key (32 bytes) and output (16 bytes) sizes are constants within libsodium's bounds,
        // the only conditions under which it fails. A silent fallback here would collapse every key into one.
        return try! GenericHash.hash(input, key: key, outputCount: FormatConstants.indexDigestCount)
    }

    /// The 16-byte prefix shared by every per-account record of one home account.
    func accountPrefix(_ homeAccountID: String) -> [UInt8] {
        digest("account", homeAccountID.asciiLowercased)
    }
}

/// Canonical token type: ASCII lower case, with an absent or empty type meaning `bearer`.
func canonicalTokenType(_ tokenType: String?) -> String {
    guard let tokenType, !tokenType.isEmpty else { return "bearer" }
    return tokenType.asciiLowercased
}

/// Canonical scope string for keys: the normalized set joined by spaces (or the lower-cased text if it does not
/// parse, which `validate` prevents for stored records).
func canonicalTarget(_ target: String) -> String {
    (try? ScopeSet(parsing: target))?.canonical ?? target.asciiLowercased
}

// The storage key of each kind (FORMAT.md §4.3). Identifiers are ASCII-lower-cased; key ids are exact.
extension Account {
    static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        index.accountPrefix(key.homeAccountID)
            + index.digest("account-entry", key.environment.asciiLowercased, key.realm.asciiLowercased)
    }
}

extension AccessToken {
    /// The bucket is what a silent lookup knows exactly; the environment (matched by alias group) and the
    /// scopes (matched as a subset) are resolved inside the bucket.
    static func bucketPrefix(homeAccountID: String, clientID: String, realm: String, tokenType: String?, keyID: String?, index: BlindIndex) -> [UInt8] {
        index.accountPrefix(homeAccountID)
            + index.digest(
                "at-bucket", clientID.asciiLowercased, realm.asciiLowercased, canonicalTokenType(tokenType), keyID ?? ""
            )
    }

    static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        bucketPrefix(
            homeAccountID: key.homeAccountID, clientID: key.clientID, realm: key.realm, tokenType: key.tokenType,
            keyID: key.keyID, index: index
        ) + index.digest("at-entry", key.environment.asciiLowercased, canonicalTarget(key.target))
    }
}

extension RefreshToken {
    static func ownerPrefix(homeAccountID: String, owner: Owner, index: BlindIndex) -> [UInt8] {
        let ownerDigest: [UInt8]
        switch owner {
        case .client(let clientID): ownerDigest = index.digest("rt-owner", "client", clientID.asciiLowercased)
        case .family(let familyID): ownerDigest = index.digest("rt-owner", "family", familyID.asciiLowercased)
        }
        return index.accountPrefix(homeAccountID) + ownerDigest
    }

    static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        ownerPrefix(homeAccountID: key.homeAccountID, owner: key.owner, index: index)
            + index.digest("rt-entry", key.environment.asciiLowercased)
    }
}

extension IDToken {
    static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        index.accountPrefix(key.homeAccountID)
            + index.digest("idt-owner", key.clientID.asciiLowercased, key.realm.asciiLowercased)
            + index.digest("idt-entry", key.environment.asciiLowercased)
    }
}

extension AppMetadata {
    static func clientPrefix(_ clientID: String, index: BlindIndex) -> [UInt8] {
        index.digest("app", clientID.asciiLowercased)
    }

    static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        clientPrefix(key.clientID, index: index) + index.digest("app-entry", key.environment.asciiLowercased)
    }
}
