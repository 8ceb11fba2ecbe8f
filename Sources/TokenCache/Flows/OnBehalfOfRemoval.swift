internal import TokenCacheRecords

extension CacheWriter {
    /// Signs one on-behalf-of partition out: its access and refresh tokens, for `clientID` only or for every client
    /// (nil), and every damaged record under the partition's prefix. The account's own tokens, ID tokens and profiles
    /// are not touched (``removeAccount(homeAccountID:clientID:environment:)`` signs an account out).
    ///
    /// What a web API calls when its caller signs out, or a long-running process ends.
    @discardableResult
    public func removeOnBehalfOf(_ partition: OnBehalfOfKey, clientID: String? = nil) throws -> RemovalSummary {
        try mappingErrors {
            let prefix = onBehalfOfPrefix(partition.value, index: store.keyring.index)!
            /// Whether a token of the prefix is the partition's and, when a client is named, that client's.
            func owned(_ userAssertionHash: String?, _ tokenClientID: String) -> Bool {
                userAssertionHash == partition.value && clientID.map { ASCII.equalIgnoringCase(tokenClientID, $0) } ?? true
            }
            var summary = RemovalSummary()
            summary.accessTokens = try remove(AccessToken.self, under: prefix, &summary) { owned($0.userAssertionHash, $0.clientID) }
            summary.refreshTokens = try remove(RefreshToken.self, under: prefix, &summary) { owned($0.userAssertionHash, $0.clientID) }
            return summary
        }
    }
}
