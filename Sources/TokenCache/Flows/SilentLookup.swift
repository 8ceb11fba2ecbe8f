internal import TokenCacheStorage
internal import TokenCacheRecords

extension CacheReader {
    /// Answers a silent token request from one snapshot, by the rules of Docs/Semantics.md ("Access-token lookup and
    /// candidate order").
    ///
    /// Cost is independent of the cache size: the access tokens scanned are those of one bucket (home
    /// account, client, realm, token type, key id: one key range), and only their small sealed summaries are
    /// decrypted, in place, into a temporary buffer; the one chosen token is decrypted in full. The companions
    /// (refresh token, ID token, account: per-account ranges of a few records each) are read with the lookup, or
    /// on first access for a hit (``CompanionLoading``).
    ///
    /// - Throws: ``TokenCacheError`` `.invalidArgument` when the request holds no scope besides
    ///   openid/profile/offline_access, or a malformed scope.
    public func silentLookup(_ query: SilentLookupQuery) throws -> SilentLookupResult {
        // ``mappingErrors(_:)`` written out: the path every request takes crosses no closure for it.
        do { return try silentLookupUnmapped(query, aliases: store.aliases) } catch {
            throw TokenCacheError.wrap(error, directory: store.directory)
        }
    }

    /// Plan, fetch, judge: the plan says which buckets to read and what answers the query; each bucket is read
    /// through the seam, in the plan's order, and judged against the plan until one yields a usable token.
    private func silentLookupUnmapped(_ query: SilentLookupQuery, aliases: EnvironmentAliases) throws -> SilentLookupResult {
        let plan = try SilentLookupPlan(query, aliases: aliases, index: store.keyring.index)
        var choice = AccessTokenChoice(opener: store)
        var accessToken: StoredEntity<AccessToken>? = nil
        var realmUsed: String? = nil
        // Taken from the token when it is chosen: read through the optional afterwards, it would be copied whole
        // (every string of the token retained and released once more).
        var tokenEnvironment: String? = nil
        buckets: for realm in plan.realms {
            let bucket = plan.bucket(realm, of: query, index: store.keyring.index)
            var contents = try BucketContents.read(bucket, in: transaction)
            while true {
                switch choice.judge(contents, against: plan, for: query) {
                case .decided(nil):
                    continue buckets
                case .decided(let token?):
                    tokenEnvironment = token.entity.environment
                    accessToken = token
                    realmUsed = realm
                    break buckets
                case .readWholeBucket(let skippingLone):
                    contents = .several(try transaction.accessTokens(inBucket: bucket, skippingLone: skippingLone))
                }
            }
        }
        let corrupt = choice.corrupt
        let request = plan.companionRequest(of: query, accessTokenEnvironment: tokenEnvironment, inRealm: realmUsed)
        // Moved out of the optional, not bound to a copy of it (which would retain every string of the token again).
        if let accessToken = accessToken.take() {
            let refreshRecommended = plan.refreshRecommended(accessToken.entity)
            let snapshotID = transaction.snapshotID
            let bucketStamp = transaction.bucketStamp
            let source: CompanionSource
            switch query.companionLoading {
            case .onFirstAccess:
                source = .deferred(
                    DeferredCompanions(source: store, request: request, lookupSnapshot: snapshotID)
                )
            case .withLookup:
                source = .loaded(try companions(for: request, aliases: aliases, lookupSnapshot: nil))
            }
            return SilentLookupResult(
                outcome: .hit, refreshRecommended: refreshRecommended, accessToken: accessToken,
                accessTokenCorrupt: corrupt, companions: source, snapshotID: snapshotID,
                bucketStamp: bucketStamp
            )
        }
        // Without an access token the outcome depends on the refresh token: read the companions now. One the token
        // endpoint refused is not offered again (a refusal record names its revision, FORMAT.md §5.7).
        let companions = try companions(for: request, aliases: aliases, lookupSnapshot: nil)
        let redeemable = try companions.refreshToken.map { try !isRefused($0) } ?? false
        return SilentLookupResult(
            outcome: redeemable ? .refresh : .interactionRequired, refreshRecommended: false,
            accessToken: nil, accessTokenCorrupt: corrupt, companions: .loaded(companions),
            snapshotID: transaction.snapshotID, bucketStamp: transaction.bucketStamp
        )
    }

    /// The refresh token to redeem, the ID token and the account of a lookup, from this transaction's snapshot.
    /// `lookupSnapshot` is the id of the lookup's snapshot when this runs in a later transaction, nil when it runs in
    /// the lookup's own.
    func companions(for request: CompanionRequest, aliases: EnvironmentAliases, lookupSnapshot: Int?) throws
        -> SilentLookupCompanions
    {
        var corrupt: [CorruptRecord] = []
        let index = store.keyring.index
        let (refreshToken, familyMembership) = try refreshTokenToRedeem(
            accountPrefix: request.refreshTokenPrefix, clientID: request.clientID, environment: request.environment, aliases: aliases,
            corrupt: &corrupt
        )
        // Hosts to probe for the account, most likely first: where the token was written, then the query's.
        var hosts = [request.accessTokenEnvironment, refreshToken?.entity.environment, request.environment].compactMap { $0 }
        hosts += aliases.hosts(aliasing: request.environment)
        var idToken: StoredEntity<IDToken>? = nil
        var account: StoredEntity<Account>? = nil
        for realm in request.profileRealms where idToken == nil {
            idToken = try newest(
                IDToken.self,
                prefix: IDToken.ownerPrefix(accountPrefix: request.accountPrefix, clientID: request.clientID, realm: realm, index: index),
                environment: request.environment, aliases: aliases, corrupt: &corrupt
            )
        }
        for realm in request.profileRealms where account == nil {
            account = try probeAccount(accountPrefix: request.accountPrefix, realm: realm, hosts: hosts, corrupt: &corrupt)
        }
        if account == nil {  // a foreign cache may hold the profile under a host spelled differently (case, alias list)
            account = try first(
                Account.self, homeAccountID: request.homeAccountID, environment: request.environment, aliases: aliases,
                corrupt: &corrupt
            ) { account in rank(account.realm, in: request.profileRealms) }
        }
        return SilentLookupCompanions(
            familyMembership: familyMembership, refreshToken: refreshToken, idToken: idToken, account: account,
            corrupt: corrupt.removingDuplicates(), fromLookupSnapshot: lookupSnapshot.map { $0 == transaction.snapshotID } ?? true
        )
    }

    /// The refresh token a silent request would redeem: the family's first when the client is (or may be) a
    /// member, then the client's own; among several of one owner (foreign caches), the newest.
    func refreshTokenToRedeem(
        homeAccountID: String, clientID: String, environment: String, aliases: EnvironmentAliases, corrupt: inout [CorruptRecord]
    ) throws -> StoredEntity<RefreshToken>? {
        try refreshTokenToRedeem(
            accountPrefix: store.keyring.index.accountPrefix(homeAccountID), clientID: clientID, environment: environment,
            aliases: aliases, corrupt: &corrupt
        ).token
    }

    private func refreshTokenToRedeem(
        accountPrefix: [UInt8], clientID: String, environment: String, aliases: EnvironmentAliases, corrupt: inout [CorruptRecord]
    ) throws -> (token: StoredEntity<RefreshToken>?, membership: SilentLookupResult.FamilyMembership) {
        let metadata = try appMetadata(clientID: clientID, environment: environment, aliases: aliases, corrupt: &corrupt)
        let plan = RefreshTokenPlan.plan(appMetadataExists: metadata != nil, familyID: metadata?.entity.familyID)
        let membership: SilentLookupResult.FamilyMembership
        switch (metadata, plan) {
        case (nil, _): membership = .unknown
        case (_, .familyThenOwn): membership = .member
        case (_, .ownOnly): membership = .notMember
        }
        var owners: [RefreshToken.Owner] = []
        if case .familyThenOwn(let familyID) = plan { owners.append(.family(familyID)) }
        owners.append(.client(clientID))
        for owner in owners {
            let prefix = RefreshToken.ownerPrefix(accountPrefix: accountPrefix, owner: owner, index: store.keyring.index)
            var best: StoredEntity<RefreshToken>? = nil
            try scan(RefreshToken.self, prefix: prefix, corrupt: &corrupt) { stored in
                guard aliases.areAliases(stored.entity.environment, environment) else { return }
                if let current = best, !Self.isNewer(stored, than: current) { return }
                best = stored
            }
            if let best { return (best, membership) }
        }
        return (nil, membership)
    }

    /// The app metadata of `clientID` in `environment`'s alias group: the record under `environment` itself
    /// (one exact-key get, the common case), else the newest among the group's other hosts.
    func appMetadata(
        clientID: String, environment: String, aliases: EnvironmentAliases, corrupt: inout [CorruptRecord]
    ) throws -> StoredEntity<AppMetadata>? {
        let exactKey = AppMetadata.storageKey(for: .init(clientID: clientID, environment: environment), index: store.keyring.index)
        let exact = try transaction.withValue(in: KeySpace.appMetadata, forKey: exactKey) { value in value.withUnsafeBytes { value in
            store.decode(AppMetadata.self, value: value, key: exactKey)
        } }
        switch exact {
        case .success(let stored)?: return stored
        case .failure(let record)?: corrupt.append(record)
        case nil: break
        }
        var found: StoredEntity<AppMetadata>? = nil
        try scan(AppMetadata.self, prefix: AppMetadata.clientPrefix(clientID, index: store.keyring.index), corrupt: &corrupt) { stored in
            guard aliases.areAliases(stored.entity.environment, environment), stored.record.key != exactKey else { return }
            if let current = found, current.updatedAt > stored.updatedAt { return }
            found = stored
        }
        return found
    }

    private static func isNewer(_ candidate: StoredEntity<RefreshToken>, than current: StoredEntity<RefreshToken>) -> Bool {
        let lhs = (candidate.entity.lastModificationTime ?? 0, candidate.updatedAt, candidate.fingerprint)
        let rhs = (current.entity.lastModificationTime ?? 0, current.updatedAt, current.fingerprint)
        return lhs > rhs
    }

    /// The Account record of (home account, realm) under the first of `hosts` that has one: exact-key gets,
    /// no scan.
    private func probeAccount(accountPrefix: [UInt8], realm: String, hosts: [String], corrupt: inout [CorruptRecord]) throws
        -> StoredEntity<Account>?
    {
        var tried = Set<String>()
        for host in hosts where tried.insert(host.asciiLowercased).inserted {
            let key = Account.storageKey(accountPrefix: accountPrefix, environment: host, realm: realm, index: store.keyring.index)
            let result = try transaction.withValue(in: KeySpace.accounts, forKey: key) { value in value.withUnsafeBytes { value in
                store.decode(Account.self, value: value, key: key)
            } }
            switch result {
            case .success(let stored)?: return stored
            case .failure(let record)?: corrupt.append(record)
            case nil: continue
            }
        }
        return nil
    }

    /// The most recently written record under `prefix` whose environment is in the alias group.
    private func newest<S: StorableEntity & EnvironmentScoped>(
        _ type: S.Type, prefix: [UInt8], environment: String, aliases: EnvironmentAliases, corrupt: inout [CorruptRecord]
    ) throws -> StoredEntity<S>? {
        var best: StoredEntity<S>? = nil
        try scan(S.self, prefix: prefix, corrupt: &corrupt) { stored in
            guard aliases.areAliases(stored.entity.environment, environment) else { return }
            if let current = best, current.updatedAt >= stored.updatedAt { return }
            best = stored
        }
        return best
    }

    /// Position of `realm` in `realms` (ASCII case-insensitive), nil when absent.
    private func rank(_ realm: String, in realms: [String]) -> Int? {
        realms.firstIndex { ASCII.equalIgnoringCase($0, realm) }
    }

    /// Among the per-account records of `homeAccountID` in the alias group, the one with the smallest rank.
    private func first<S: StorableEntity & EnvironmentScoped>(
        _ type: S.Type, homeAccountID: String, environment: String, aliases: EnvironmentAliases,
        corrupt: inout [CorruptRecord], rank: (S) -> Int?
    ) throws -> StoredEntity<S>? {
        var best: (rank: Int, stored: StoredEntity<S>)? = nil
        try scan(S.self, prefix: store.keyring.index.accountPrefix(homeAccountID), corrupt: &corrupt) { stored in
            guard aliases.areAliases(stored.entity.environment, environment), let position = rank(stored.entity) else { return }
            if let current = best, current.rank < position || (current.rank == position && current.stored.updatedAt >= stored.updatedAt) {
                return
            }
            best = (position, stored)
        }
        return best?.stored
    }

    /// Decodes every record of `prefix`, passing the good ones to `body` and collecting the damaged ones.
    /// `damagedKeys`, if given, receives the storage key of every record that could not be opened.
    func scan<S: StorableEntity>(
        _ type: S.Type, prefix: [UInt8], corrupt: inout [CorruptRecord], damagedKeys: ((_ key: [UInt8]) -> Void)? = nil,
        _ body: (StoredEntity<S>) throws -> Void
    ) throws {
        var damaged: [CorruptRecord] = []
        try transaction.forEach(in: KeySpace(S.kind), prefix: prefix) { key, value in try key.withUnsafeBytes { key in try value.withUnsafeBytes { value in
            let keyBytes = Array(key)
            switch store.decode(S.self, value: value, key: keyBytes) {
            case .success(let stored): try body(stored)
            case .failure(let record):
                damaged.append(record)
                damagedKeys?(keyBytes)
            }
            return true
        } } }
        corrupt += damaged
    }
}

/// Entities that belong to one authority host.
protocol EnvironmentScoped { var environment: String { get } }
extension Account: EnvironmentScoped {}
extension AccessToken: EnvironmentScoped {}
extension RefreshToken: EnvironmentScoped {}
extension IDToken: EnvironmentScoped {}
extension AppMetadata: EnvironmentScoped {}

/// The record layer opens what the judgement of a lookup asks for.
extension RecordStore: AccessTokenOpening {
    func withSummary<R>(_ entry: BucketEntry, _ body: (AccessTokenSummaryView) throws(FormatError) -> R) throws(FormatError) -> R {
        try withSummary(entry.value, key: entry.key, body)
    }

    func decodeAccessToken(_ entry: BucketEntry, reusing query: SilentLookupQuery) -> Result<StoredEntity<AccessToken>, CorruptRecord> {
        decode(AccessToken.self, value: entry.value, key: Array(entry.key)) { fields throws(FormatError) in
            try AccessToken.decoded(
                from: fields, homeAccountID: query.homeAccountID, environment: query.environment, clientID: query.clientID,
                realm: query.realm)
        }
    }

    func corruptAccessToken(_ entry: BucketEntry, _ error: FormatError) -> CorruptRecord {
        corrupt(.accessToken, KeySpace.accessTokens, Array(entry.key), error.message)
    }
}
