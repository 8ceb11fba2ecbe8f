package import TokenCacheStorage

extension KeySpace {
    /// The key space that holds the records of `kind` (FORMAT.md §3).
    package init(_ kind: EntityKind) {
        self =
            switch kind {
            case .account: .accounts
            case .accessToken: .accessTokens
            case .refreshToken: .refreshTokens
            case .idToken: .idTokens
            case .appMetadata: .appMetadata
            }
    }
}
