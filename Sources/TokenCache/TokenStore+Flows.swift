/// The silent-flow operations of an auth client, each in its own transaction.
extension TokenStore {
    /// Ingests one token response in one durable write transaction. See ``CacheWriter/ingest(_:context:)``.
    @discardableResult
    public func ingest(_ response: TokenResponse, context: TokenRequestContext) throws -> IngestResult {
        let plan = try IngestPlan.mapped(response: response, context: context, for: store)
        return try write { try $0.ingest(plan, now: context.now) }
    }

    /// Answers a silent token request. See ``CacheReader/silentLookup(_:)``.
    public func silentLookup(_ query: SilentLookupQuery) throws -> SilentLookupResult {
        if store.readsByPlan { return try fetchingSilentLookup(query) }
        return try store.read { try $0.silentLookup(query) }
    }

    /// Replaces a refresh token only if the stored one is still `expected`. See
    /// ``CacheWriter/replaceRefreshToken(_:expectedSecret:)``.
    @discardableResult
    public func replaceRefreshToken(_ replacement: RefreshToken, expectedSecret expected: Secret) throws -> UInt64 {
        try write { try $0.replaceRefreshToken(replacement, expectedSecret: expected) }
    }

    /// The signed-in users. See ``CacheReader/accounts(clientID:environment:username:)``.
    public func accounts(clientID: String? = nil, environment: String? = nil, username: String? = nil) throws
        -> (accounts: [AccountSummary], corrupt: [CorruptRecord])
    {
        try read {
            try $0.accounts(clientID: clientID, environment: environment, username: username)
        }
    }

    /// Signs one on-behalf-of partition out, for one client or every client.
    /// See ``CacheWriter/removeOnBehalfOf(_:clientID:)``.
    @discardableResult
    public func removeOnBehalfOf(_ partition: OnBehalfOfKey, clientID: String? = nil) throws -> RemovalSummary {
        try removing { try $0.removeOnBehalfOf(partition, clientID: clientID) }
    }

    /// Signs an account out for one client, or everywhere (`clientID == nil`).
    /// See ``CacheWriter/removeAccount(homeAccountID:clientID:environment:)``.
    @discardableResult
    public func removeAccount(homeAccountID: String, clientID: String?, environment: String? = nil) throws -> RemovalSummary {
        try removing {
            try $0.removeAccount(
                homeAccountID: homeAccountID, clientID: clientID, environment: environment
            )
        }
    }
}
