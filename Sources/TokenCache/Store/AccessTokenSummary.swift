/// The sealed summary of an access token (FORMAT.md §5.4): what a lookup needs to pick a candidate
/// without decrypting the token.
struct AccessTokenSummary {
    var environment: String
    /// The canonical target (FORMAT.md §4.2): lower-cased scopes, sorted bytewise, de-duplicated, one space apart.
    var canonicalTarget: String
    var cachedAt: Int64
    var expiresOn: Int64
    var refreshOn: Int64?

    init(fields: FieldTable) throws(FormatError) {
        var decoder = FieldDecoder(fields, kind: .accessToken)
        environment = try decoder.string("environment")
        canonicalTarget = try decoder.string("target")
        cachedAt = try decoder.integer("cached_at")
        expiresOn = try decoder.integer("expires_on")
        refreshOn = try decoder.optionalInteger("refresh_on")
    }

    init(_ token: AccessToken) throws(FormatError) {
        guard let scopes = try? ScopeSet(parsing: token.target) else { throw FormatError("target is not a scope list") }
        environment = token.environment
        canonicalTarget = scopes.canonical
        cachedAt = token.cachedAt
        expiresOn = token.expiresOn
        refreshOn = token.refreshOn
    }

    /// The scopes as a set (for intersect-delete, off the lookup path).
    var scopes: ScopeSet {
        get throws(FormatError) {
            guard let scopes = try? ScopeSet(parsing: canonicalTarget) else { throw FormatError("summary target is not a scope list") }
            return scopes
        }
    }

    /// Whether every scope of `request` is in the target: a merge over the canonical string, no allocation.
    func covers(_ request: ScopeSet) -> Bool {
        var target = canonicalTarget.utf8[...]
        for scope in request.normalized {
            var found = false
            while let end = target.firstIndex(of: 0x20) ?? (target.isEmpty ? nil : target.endIndex) {
                let token = target[target.startIndex..<end]
                target = end == target.endIndex ? target[end...] : target[target.index(after: end)...]
                if token.elementsEqual(scope.utf8) { found = true; break }
                if !token.lexicographicallyPrecedes(scope.utf8) { return false }  // sorted: passed where it would be
            }
            if !found { return false }
        }
        return true
    }
}

extension RecordStore {
    /// The summary of an access-token value; from the body when a (foreign or older) writer left none.
    func openSummary(_ value: UnsafeRawBufferPointer, key: [UInt8]) throws(FormatError) -> AccessTokenSummary {
        let slot = slot(DatabaseName.accessTokens, key)
        if let plaintext = try RecordEnvelope.open(.summary, of: value, slot: slot, keys: keyring.recordKey) {
            return try AccessTokenSummary(fields: try FieldTable(plaintext, offset: 0))
        }
        return try AccessTokenSummary(try AccessToken(decoding: try openBody(value, slot: slot).fields))
    }
}
