internal import TokenCacheSodium

/// Keyed hashing of identifiers into storage keys (FORMAT.md §4), so that no home account id, client id,
/// realm, environment or scope is readable in any file.
///
/// `H(label, f1, …, fn) = BLAKE2b-128(key = index_key, enc(label, f1, …, fn))` with
/// `enc(x1, …) = u32be(len x1) ‖ x1 ‖ …`. The length prefixes make `("a", "bc")` and `("ab", "c")` distinct,
/// which MSAL's `-`-joined keys are not.
struct BlindIndex: Sendable {
    let key: SecureKey
    /// Keyed BLAKE2b-128 under `key`, from a saved post-key-block state (one compression per digest, not two).
    private let hasher: KeyedHasher

    init(key: SecureKey) throws(SodiumError) {
        self.key = key
        hasher = try KeyedHasher(key: key, outputCount: FormatConstants.indexDigestCount)
    }

    /// `D(label, ascii_lower(f1), …, ascii_lower(fn) [, exact])`: identifiers are lower-cased while they are
    /// copied into the hash input (no intermediate strings); `exact` (a key id) is taken as it is. Inlined, like the
    /// function below, so that the variadic field array can live on the caller's stack.
    @inline(__always)
    func digest(_ label: StaticString, _ fields: String..., exact: String? = nil) -> [UInt8] {
        digest(label, fields, exact: exact, after: [])
    }

    /// `prefix ‖ D(label, …)` in one allocation: how a storage key grows from its account prefix.
    @inline(__always)
    func digest(_ label: StaticString, _ fields: String..., exact: String? = nil, after prefix: [UInt8]) -> [UInt8] {
        digest(label, fields, exact: exact, after: prefix)
    }

    @inline(__always)  // lets the variadic callers' field arrays live on the stack
    private func digest(_ label: StaticString, _ fields: [String], exact: String?, after prefix: [UInt8]) -> [UInt8] {
        var total = 4 + label.utf8CodeUnitCount + (exact.map { 4 + $0.utf8.count } ?? 0)
        for field in fields { total += 4 + field.utf8.count }
        return withUnsafeTemporaryAllocation(byteCount: total, alignment: 8) { buffer in
            /// Writes `lp(bytes)` at `cursor`, ASCII-lower-cased when asked, and returns where the next one goes.
            /// (A returned position, not a captured `var`: no dynamic exclusivity check per field.)
            func append(_ bytes: UnsafeRawBufferPointer, at cursor: UnsafeMutableRawPointer, lowercased: Bool) -> UnsafeMutableRawPointer {
                cursor.storeBytes(of: UInt32(bytes.count).bigEndian, as: UInt32.self)
                let start = cursor + 4
                if lowercased {
                    // Raw stores: the temporary buffer is raw memory, never bound to a type.
                    for index in 0..<bytes.count {
                        start.storeBytes(of: ASCII.lowercased(bytes[index]), toByteOffset: index, as: UInt8.self)
                    }
                } else if let base = bytes.baseAddress, !bytes.isEmpty {
                    start.copyMemory(from: base, byteCount: bytes.count)
                }
                return start + bytes.count
            }
            var cursor = append(label.utf8, at: buffer.baseAddress!, lowercased: false)
            for var field in fields { cursor = field.withUTF8 { append(UnsafeRawBufferPointer($0), at: cursor, lowercased: true) } }
            if var exact { cursor = exact.withUTF8 { append(UnsafeRawBufferPointer($0), at: cursor, lowercased: false) } }
            assert(cursor == buffer.baseAddress! + total)
            let count = FormatConstants.indexDigestCount
            // `repeating:` rather than `unsafeUninitializedCapacity:`, whose unspecialized path looks up the array's
            // generic metadata on every call (measured: a fifth of this function's own time).
            var result = [UInt8](repeating: 0, count: prefix.count + count)
            result.withUnsafeMutableBytes { output in
                prefix.withUnsafeBytes { if !$0.isEmpty { output.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
                // SAFETY of try!: the hasher was built for this key (32 bytes) and output size (16 bytes), the only
                // conditions under which it fails. A silent fallback would collapse every key into one.
                try! hasher.hash(UnsafeRawBufferPointer(buffer), into: UnsafeMutableRawBufferPointer(rebasing: output[prefix.count...]))
            }
            return result
        }
    }

    /// The 16-byte prefix shared by every per-account record of one home account.
    func accountPrefix(_ homeAccountID: String) -> [UInt8] {
        digest("account", homeAccountID)
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
    static func bucketPrefix(homeAccountID: String, clientID: String, realm: String, tokenType: String?, keyID: String?, index: BlindIndex) -> [UInt8] {
        bucketPrefix(accountPrefix: index.accountPrefix(homeAccountID), clientID: clientID, realm: realm, tokenType: tokenType, keyID: keyID, index: index)
    }

    static func bucketPrefix(accountPrefix: [UInt8], clientID: String, realm: String, tokenType: String?, keyID: String?, index: BlindIndex) -> [UInt8] {
        index.digest("at-bucket", clientID, realm, canonicalTokenType(tokenType), exact: keyID ?? "", after: accountPrefix)
    }

    static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        let bucket = bucketPrefix(
            homeAccountID: key.homeAccountID, clientID: key.clientID, realm: key.realm, tokenType: key.tokenType,
            keyID: key.keyID, index: index
        )
        return entryKey(for: key, bucket: bucket, index: index)
    }

    /// The entry key of `key` in its bucket, `bucket` already computed.
    static func entryKey(for key: Key, bucket: [UInt8], index: BlindIndex) -> [UInt8] {
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

    static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        storageKey(for: key, accountPrefix: index.accountPrefix(key.homeAccountID), index: index)
    }

    /// The key under an account prefix already computed.
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

    static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
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

    static func storageKey(for key: Key, index: BlindIndex) -> [UInt8] {
        index.digest("app-entry", key.environment, after: clientPrefix(key.clientID, index: index))
    }
}
