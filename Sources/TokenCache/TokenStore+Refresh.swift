/// A refresh's response prepared on the facade's store, before the write that stores it
/// (``CacheWriter/storeRefresh(_:)``, in `Flows/RefreshStorage.swift`).
extension TokenStore {
    /// Derives and keys what a refresh's response yields, outside any transaction.
    ///
    /// - Throws: ``TokenCacheError`` `.invalidArgument` for a malformed response; nothing is prepared then.
    package func prepareRefresh(
        _ response: TokenResponse, redeemed: RefreshToken, context: TokenRequestContext
    ) throws(TokenCacheError) -> PreparedRefresh {
        let rotated = response.refreshToken.map { secret in
            RefreshToken(
                homeAccountID: redeemed.homeAccountID, environment: redeemed.environment, clientID: context.clientID, secret: secret,
                familyID: response.foci, userAssertionHash: redeemed.userAssertionHash
            )
        }
        let plan = try IngestPlan.mapped(response: response, context: context, for: store)
        return PreparedRefresh(redeemed: redeemed, rotated: rotated, plan: plan, now: context.now)
    }
}
