package import TokenCache
/// One entity of an MSAL cache, whichever of the five kinds: what an entry maps to, and what the writer takes.
enum MSALEntity: Sendable, Hashable {
    case accessToken(AccessToken)
    case refreshToken(RefreshToken)
    case idToken(IDToken)
    case account(Account)
    case appMetadata(AppMetadata)

    /// The kind of the wrapped entity.
    var kind: EntityKind {
        switch self {
        case .accessToken: .accessToken
        case .refreshToken: .refreshToken
        case .idToken: .idToken
        case .account: .account
        case .appMetadata: .appMetadata
        }
    }
}

/// Everything an MSAL cache holds: the entities and the unknown top-level sections, for the writer (and what
/// a whole-file import collects).
package struct MSALCacheContent: Sendable, Hashable {
    var accessTokens: [AccessToken] = []
    var refreshTokens: [RefreshToken] = []
    var idTokens: [IDToken] = []
    var accounts: [Account] = []
    package var appMetadata: [AppMetadata] = []
    /// Top-level members that are not entity sections, by name as written.
    var unknownSections: [String: JSONValue] = [:]

    package init() {}

    /// Adds one entity to its list.
    mutating func append(_ entity: MSALEntity) {
        switch entity {
        case .accessToken(let token): accessTokens.append(token)
        case .refreshToken(let token): refreshTokens.append(token)
        case .idToken(let token): idTokens.append(token)
        case .account(let account): accounts.append(account)
        case .appMetadata(let metadata): appMetadata.append(metadata)
        }
    }
}
