internal import TokenCache
internal import TokenCacheRecords

/// An entry of an MSAL cache file ready to be applied: its entity, and what the import rule needs of it derived
/// before the write transaction (storage keys, parsed scopes), so that the transaction does only the rule's reads
/// and the writes.
struct MSALImportItem {
    /// What an access token adds.
    struct AccessTokenPlan {
        /// The bucket prefix: home account, client, realm, token type and key id.
        let bucket: [UInt8]
        let scopes: ScopeSet
    }

    let entity: MSALEntity
    /// The record of the entity's identity (access tokens: under their entry key).
    let address: RecordAddress
    /// For an access token.
    let accessToken: AccessTokenPlan?

    init(_ entity: MSALEntity, index: BlindIndex) throws {
        self.entity = entity
        address = Self.address(of: entity, index: index)
        if case .accessToken(let token) = entity {
            accessToken = AccessTokenPlan(bucket: Array(address.key.prefix(RecordStore.bucketPrefixCount)), scopes: try ScopeSet(parsing: token.target))
        } else {
            accessToken = nil
        }
    }

    /// Where the record of `entity`'s identity is stored (access tokens: under their entry key).
    static func address(of entity: MSALEntity, index: BlindIndex) -> RecordAddress {
        switch entity {
        case .accessToken(let token):
            return RecordAddress(kind: .accessToken, key: AccessToken.storageKey(for: token.key, index: index))
        case .refreshToken(let token): return RecordAddress(kind: .refreshToken, key: RefreshToken.storageKey(for: token.key, index: index))
        case .idToken(let token): return RecordAddress(kind: .idToken, key: IDToken.storageKey(for: token.key, index: index))
        case .account(let account): return RecordAddress(kind: .account, key: Account.storageKey(for: account.key, index: index))
        case .appMetadata(let metadata): return RecordAddress(kind: .appMetadata, key: AppMetadata.storageKey(for: metadata.key, index: index))
        }
    }
}
