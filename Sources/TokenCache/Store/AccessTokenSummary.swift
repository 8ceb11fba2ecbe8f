/// The sealed summary of an access token (FORMAT.md §5.4): what a lookup needs to pick a candidate
/// without decrypting the token.
struct AccessTokenSummary {
    var environment: String
    /// Normalized scopes.
    var scopes: ScopeSet
    var cachedAt: Int64
    var expiresOn: Int64
    var refreshOn: Int64?

    init(fields: FieldMap) throws(FormatError) {
        var decoder = FieldDecoder(fields, kind: .accessToken)
        environment = try decoder.string("environment")
        let target = try decoder.string("target")
        guard let scopes = try? ScopeSet(parsing: target) else { throw FormatError("summary target is not a scope list") }
        self.scopes = scopes
        cachedAt = try decoder.integer("cached_at")
        expiresOn = try decoder.integer("expires_on")
        refreshOn = try decoder.optionalInteger("refresh_on")
    }

    init(_ token: AccessToken) throws(FormatError) {
        guard let scopes = try? ScopeSet(parsing: token.target) else { throw FormatError("target is not a scope list") }
        environment = token.environment
        self.scopes = scopes
        cachedAt = token.cachedAt
        expiresOn = token.expiresOn
        refreshOn = token.refreshOn
    }
}

extension RecordStore {
    /// The summary of an access-token value; from the body when a (foreign or older) writer left none.
    func openSummary(_ value: UnsafeRawBufferPointer, key: [UInt8]) throws(FormatError) -> AccessTokenSummary {
        let slot = slot(DatabaseName.accessTokens, key)
        if let plaintext = try RecordEnvelope.open(.summary, of: value, slot: slot, keys: keyring.recordKey) {
            return try AccessTokenSummary(fields: try FieldMap.decode(plaintext))
        }
        return try AccessTokenSummary(try AccessToken(decoding: try openBody(value, slot: slot).fields))
    }
}
