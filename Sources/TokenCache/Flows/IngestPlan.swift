internal import TokenCacheRecords

/// An ingest prepared before its write transaction: what a token response yields, and the storage key of each record
/// it writes, with the account prefix `P(hid)` derived once for all of them and the new token's scopes parsed once.
///
/// Pure (the keys come from the store's blind index, a keyed hash): computed outside the writer lock, and not again
/// when a transaction re-runs after the map grows. The transaction only reads, judges and writes
/// (``CacheWriter/ingest(_:now:)``).
struct IngestPlan: Sendable {
    private(set) var derived: DerivedEntities
    /// The access token's bucket and its entry key in it (FORMAT.md §4.3).
    let bucket: [UInt8]
    let accessTokenKey: [UInt8]
    /// The access token's scopes, for intersect-delete.
    let scopes: ScopeSet
    private(set) var refreshTokenKey: [UInt8]?
    let idTokenKey: [UInt8]?
    let accountKey: [UInt8]?
    let appMetadataKey: [UInt8]

    /// - Throws: ``TokenCacheError`` `.invalidArgument` for a target that is not a scope list.
    init(_ derived: DerivedEntities, index: BlindIndex) throws {
        self.derived = derived
        let token = derived.accessToken
        let accountPrefix = index.accountPrefix(token.homeAccountID)
        bucket = AccessToken.bucketPrefix(
            accountPrefix: onBehalfOfPrefix(token.userAssertionHash, index: index) ?? accountPrefix, clientID: token.clientID, realm: token.realm, tokenType: token.tokenType, keyID: token.keyID,
            extendedCacheKey: token.extendedCacheKey, index: index
        )
        accessTokenKey = AccessToken.entryKey(for: token.key, bucket: bucket, index: index)
        scopes = try ScopeSet(parsing: token.target)
        // The derivation gives every record of a response the access token's home account, so its prefix serves them
        // all; any other home account gets its own.
        func prefix(of homeAccountID: String) -> [UInt8] {
            ASCII.equalIgnoringCase(homeAccountID, token.homeAccountID) ? accountPrefix : index.accountPrefix(homeAccountID)
        }
        refreshTokenKey = derived.refreshToken.map { token in
            RefreshToken.storageKey(
                for: token.key, accountPrefix: onBehalfOfPrefix(token.userAssertionHash, index: index) ?? prefix(of: token.homeAccountID),
                index: index
            )
        }
        idTokenKey = derived.idToken.map { IDToken.storageKey(for: $0.key, accountPrefix: prefix(of: $0.homeAccountID), index: index) }
        accountKey = derived.account.map {
            Account.storageKey(accountPrefix: prefix(of: $0.homeAccountID), environment: $0.environment, realm: $0.realm, index: index)
        }
        appMetadataKey = AppMetadata.storageKey(for: derived.appMetadata.key, index: index)
    }
}

extension IngestPlan {
    /// Derives the entities of `response` and prepares their keys, with every failure as ``TokenCacheError`` (a
    /// malformed response is `.invalidArgument`): for the public entry points.
    static func mapped(response: TokenResponse, context: TokenRequestContext, for store: RecordStore) throws(TokenCacheError) -> IngestPlan {
        do { return try IngestPlan(try DerivedEntities(response: response, context: context), index: store.keyring.index) } catch {
            throw TokenCacheError.wrap(error, directory: store.directory)
        }
    }
}

extension IngestPlan {
    /// The plan without the response's refresh token (and its key): what a refresh stores when another writer
    /// rotated the token first.
    func droppingRefreshToken() -> IngestPlan {
        var plan = self
        plan.derived.refreshToken = nil
        plan.refreshTokenKey = nil
        return plan
    }
}
