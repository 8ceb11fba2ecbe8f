internal import TokenCache
/// Where ``MSALCacheWriter`` takes what it writes from: per kind, every entity's key first (to sort the section and
/// to tell apart records that derive one key), then each entity once, in key order. A store is written that way
/// with only its keys in memory; ``MSALCacheContent`` (everything in memory) is a source too.
protocol MSALExportSource {
    /// How the source finds an entity again.
    associatedtype Handle

    /// The unknown top-level sections to write back, by name.
    func keptSections() throws -> [String: JSONValue]
    /// Every entity of `kind`, as its keys and a handle.
    func keys(of kind: EntityKind) throws -> [MSALExportKey<Handle>]
    /// The entity behind `handle`.
    func entity(_ handle: Handle, of kind: EntityKind) throws -> MSALEntity
}

/// One entity's entry key in an export, and how to find the entity again.
struct MSALExportKey<Handle> {
    /// ``MSALCacheKey/key(of:)-(MSALEntity)``.
    var key: String
    /// ``MSALCacheKey/distinguishedKey(of:)-(MSALEntity)``: the key it takes when another entity has `key`.
    var distinguished: String?
    var handle: Handle

    init(_ entity: MSALEntity, handle: Handle) {
        key = MSALCacheKey.key(of: entity)
        distinguished = MSALCacheKey.distinguishedKey(of: entity)
        self.handle = handle
    }
}

extension MSALCacheContent: MSALExportSource {
    func keptSections() -> [String: JSONValue] { unknownSections }

    func keys(of kind: EntityKind) -> [MSALExportKey<Int>] {
        entities(of: kind).enumerated().map { MSALExportKey($0.element, handle: $0.offset) }
    }

    func entity(_ handle: Int, of kind: EntityKind) -> MSALEntity { entities(of: kind)[handle] }

    private func entities(of kind: EntityKind) -> [MSALEntity] {
        switch kind {
        case .accessToken: accessTokens.map(MSALEntity.accessToken)
        case .refreshToken: refreshTokens.map(MSALEntity.refreshToken)
        case .idToken: idTokens.map(MSALEntity.idToken)
        case .account: accounts.map(MSALEntity.account)
        case .appMetadata: appMetadata.map(MSALEntity.appMetadata)
        }
    }
}
