internal import TokenCacheStorage
internal import TokenCacheRecords

/// What ``CacheWriter/ingest(_:context:)`` wrote.
public struct IngestResult: Sendable {
    /// The key of the access token written.
    public var accessToken: AccessToken.Key
    /// The revision the access token's record now has.
    public var accessTokenRevision: UInt64
    /// The revision of the refresh token written; nil when the response carried none (or it is an app token).
    public var refreshTokenRevision: UInt64?
    /// The home account the records were written under; empty for an app (client-credential) token.
    public var homeAccountID: String
    /// Access tokens of the same bucket that the new one replaced (intersecting scopes) or that had expired.
    public var accessTokensRemoved: Int
    /// Expired access tokens of other buckets that the write's bounded sweep removed.
    public var expiredAccessTokensSwept = 0
    /// Access tokens evicted because the store was over its cap (`setAccessTokenCap(_:progress:)`, in
    /// TokenCacheOperations).
    public var accessTokensEvicted = 0
}

extension CacheWriter {
    /// Writes everything one token response yields (access token, refresh token, ID token, account, app
    /// metadata), derived exactly as MSAL would, in this transaction.
    ///
    /// Before the access token is saved, stored access tokens of the same bucket and alias group whose scopes
    /// intersect the new ones are deleted (the .NET rule; the reserved OIDC scopes do not count), and so are
    /// those already expired. An existing account is updated without clobbering identity fields a response
    /// without an id_token cannot know; unknown fields of every replaced record are carried over.
    ///
    /// - Throws: ``TokenCacheError`` `.invalidArgument` for a malformed response; nothing is written then.
    @discardableResult
    public func ingest(_ response: TokenResponse, context: TokenRequestContext) throws -> IngestResult {
        try ingest(try IngestPlan.mapped(response: response, context: context, for: store), now: context.now)
    }

    /// Writes what one token response yields, already derived and keyed: the part of an ingest that needs the
    /// transaction. ``TokenStore/ingest(_:context:)`` prepares the plan before it begins one, so that no parsing or
    /// key derivation runs under the writer lock (nor again when a transaction re-runs).
    func ingest(_ plan: IngestPlan, now: Int64) throws -> IngestResult {
        try mappingErrors { try ingestUnmapped(plan, now: now) }
    }

    private func ingestUnmapped(_ plan: IngestPlan, now: Int64) throws -> IngestResult {
        let derived = plan.derived
        // The access token's unknown fields are read before intersect-delete may evict its record.
        var accessToken = derived.accessToken
        let previous = try? store.storedAccessToken(entryKey: plan.accessTokenKey, in: transaction)
        if let previous {
            accessToken = Self.carryingUnknownFields(previous.entity, accessToken)
        }
        let (removed, emptied) = try removeSupersededAccessTokens(by: accessToken, plan: plan, previous: previous, now: now)
        let evictedBefore = accessTokensEvicted
        let accessTokenRevision = try putStorable(
            accessToken, expectedRevision: nil, continuing: previous?.revision ?? 0, entryKey: plan.accessTokenKey, intoEmptyBucket: emptied
        )
        let evicted = accessTokensEvicted - evictedBefore
        let swept = try sweepExpiredAccessTokens(now: now, protecting: plan.accessTokenKey)
        var refreshTokenRevision: UInt64? = nil
        if let refreshToken = derived.refreshToken {
            refreshTokenRevision = try upsert(refreshToken, entryKey: plan.refreshTokenKey, merging: Self.carryingUnknownFields)
        }
        if let idToken = derived.idToken { try upsert(idToken, entryKey: plan.idTokenKey, merging: Self.carryingUnknownFields) }
        if let account = derived.account { try upsert(account, entryKey: plan.accountKey, merging: Self.merging) }
        try upsert(derived.appMetadata, entryKey: plan.appMetadataKey, merging: Self.carryingUnknownFields)
        return IngestResult(
            accessToken: derived.accessToken.key, accessTokenRevision: accessTokenRevision,
            refreshTokenRevision: refreshTokenRevision, homeAccountID: derived.accessToken.homeAccountID,
            accessTokensRemoved: removed, expiredAccessTokensSwept: swept, accessTokensEvicted: evicted
        )
    }

    /// Replaces a refresh token only if the stored one is still `expected` (compared in constant time): the
    /// rotation guard for several processes redeeming one refresh token. The loser gets `.conflict` with the
    /// current revision and re-reads; a newer token is never overwritten by an older one.
    ///
    /// The replaced token is the one stored under `replacement`'s key, or, when the rotation changed the owner, the
    /// one stored under the other owner (a response that adds `foci` makes the client's token a family token, one
    /// without `foci` makes the family's token the client's, and the owner is part of the key):
    /// - **client → family**: the client-owned token is deleted. MSAL Python keeps one refresh token per client,
    ///   which the family token replaces; here it was redeemed and superseded, and left in place a second
    ///   rotation of it would succeed as well (a lost update). A family token already stored for another member
    ///   is replaced, as ingesting the response would; its revision continues.
    /// - **family → client** (the client left the family): the family token stays, because it is still every
    ///   other member's, as ingesting such a response leaves it. The family is the one the client's app metadata
    ///   names, else the only family the server uses, `"1"`. Since the family token is unchanged, a second
    ///   process that redeemed the same family token succeeds as well; its client token replaces the first one,
    ///   which is equally new.
    ///
    /// Only the refresh token changes; the client's family membership is in its app metadata, which ingesting the
    /// response updates (the README's recipe replaces the token and ingests the response in one transaction).
    ///
    /// - Throws: ``TokenCacheError`` `.conflict` when no candidate holds `expected` (with the revision and
    ///   fingerprint of the record under `replacement`'s key, else of the other owner's); nothing is written then.
    @discardableResult
    public func replaceRefreshToken(_ replacement: RefreshToken, expectedSecret expected: Secret) throws -> UInt64 {
        try mappingErrors { try replaceRefreshTokenUnmapped(replacement, expectedSecret: expected) }
    }

    private func replaceRefreshTokenUnmapped(_ replacement: RefreshToken, expectedSecret expected: Secret) throws -> UInt64 {
        let current = try get(replacement.key)
        if let current, current.entity.secret == expected {
            return try put(replacement, expectedRevision: current.revision)
        }
        var otherOwner: StoredEntity<RefreshToken>? = nil
        for key in try previousOwnerKeys(of: replacement) {
            guard let stored = try get(key) else { continue }
            guard stored.entity.secret == expected else {
                if otherOwner == nil { otherOwner = stored }
                continue
            }
            let revision = try put(replacement, expectedRevision: current?.revision ?? 0)
            if case .family = replacement.owner { try delete(key, expectedRevision: stored.revision) }
            return revision
        }
        guard let reported = current ?? otherOwner else {
            throw TokenCacheError(.conflict, "no refresh token is stored for this account and client any more", currentRevision: nil)
        }
        throw TokenCacheError(
            .conflict, "the refresh token was rotated by another writer (revision \(reported.revision))",
            recordFingerprint: reported.fingerprint, currentRevision: reported.revision
        )
    }

    /// Where the token `replacement` rotates was stored if the rotation changed its owner: the client's own key for
    /// a family token; for a client token, the family of the client's app metadata and the only family in use.
    private func previousOwnerKeys(of replacement: RefreshToken) throws -> [RefreshToken.Key] {
        func key(_ owner: RefreshToken.Owner) -> RefreshToken.Key {
            RefreshToken.Key(
                homeAccountID: replacement.homeAccountID, environment: replacement.environment, owner: owner,
                userAssertionHash: replacement.userAssertionHash
            )
        }
        if case .family = replacement.owner { return [key(.client(replacement.clientID))] }
        var families: [String] = []
        let metadataKey = AppMetadata.Key(clientID: replacement.clientID, environment: replacement.environment)
        if let family = (try? get(metadataKey))?.entity.familyID, !family.isEmpty { families.append(family) }
        if !families.contains(RefreshTokenPlan.theOnlyFamilyID) { families.append(RefreshTokenPlan.theOnlyFamilyID) }
        return families.map { key(.family($0)) }
    }

    /// Deletes the access tokens `new` supersedes in its bucket (``IntersectDelete/supersedes(new:environment:stored:environment:expiresOn:now:aliases:)``);
    /// returns how many, and whether the bucket is empty now (it held nothing else, not even a damaged record): the
    /// new token then goes straight where a bucket's lone token goes, with nothing to look up or move.
    /// `previous`, the token stored under the new one's key and already read whole, is judged from its fields: its
    /// record is opened once per ingest, not a second time for its summary.
    private func removeSupersededAccessTokens(
        by new: AccessToken, plan: IngestPlan, previous: StoredEntity<AccessToken>?, now: Int64
    ) throws -> (removed: Int, emptied: Bool) {
        let (newScopes, aliases) = (plan.scopes, store.aliases)
        let previousScopes = previous.flatMap { try? ScopeSet(parsing: $0.entity.target) }
        var doomed: [[UInt8]] = []
        var held = 0
        try writeTransaction.forEach(in: KeySpace.accessTokens, prefix: plan.bucket) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
            held += 1
            let storageKey = Array(key)
            let stored: (scopes: ScopeSet, environment: String, expiresOn: Int64)
            if let previous, let previousScopes, storageKey == previous.record.key {
                stored = (previousScopes, previous.entity.environment, previous.entity.expiresOn)
            } else {
                // A damaged record in the bucket is left for `verify`/repair tooling, not silently deleted.
                guard let summary = try? store.openSummary(value, key: storageKey), let storedScopes = try? summary.scopes else { return true }
                stored = (storedScopes, summary.environment, summary.expiresOn)
            }
            if IntersectDelete.supersedes(
                new: newScopes, environment: new.environment, stored: stored.scopes, environment: stored.environment,
                expiresOn: stored.expiresOn, now: now, aliases: aliases
            ) {
                doomed.append(storageKey)
            }
            return true
        } } }
        let emptied = doomed.count == held
        let removed = try deleteRecords(AccessToken.self, keys: doomed, placing: !emptied)
        return (removed, emptied && removed == held)
    }

    /// `new` with the unknown fields of the record it replaces (its own unknown fields win).
    private static func carryingUnknownFields<E: CacheEntity>(_ previous: E, _ new: E) -> E {
        var merged = new
        merged.additionalFields = previous.additionalFields.merging(new.additionalFields) { _, new in new }
        return merged
    }

    /// An account update that keeps what the stored profile knows and the response does not.
    private static func merging(_ previous: Account, _ account: Account) -> Account {
        var merged = carryingUnknownFields(previous, account)
        func keep(_ field: WritableKeyPath<Account, String?>) {
            if merged[keyPath: field]?.isEmpty ?? true { merged[keyPath: field] = previous[keyPath: field] }
        }
        keep(\.localAccountID)
        keep(\.username)
        keep(\.accountSource)
        keep(\.name)
        keep(\.givenName)
        keep(\.familyName)
        keep(\.middleName)
        keep(\.alternativeAccountID)
        keep(\.clientInfo)
        return merged
    }
}
