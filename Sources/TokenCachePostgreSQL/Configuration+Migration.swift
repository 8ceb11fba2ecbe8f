public import TokenCache

/// What ``Configuration/migrateSharedStore()`` did.
public struct SharedStoreMigration: Sendable, Equatable {
    /// The version the store's tables had.
    public let from: Int32
    /// The version they have now: this build's.
    public let to: Int32
    /// Whether anything changed (false: the tables were at this build's version already).
    public var migrated: Bool { from != to }
}

extension Configuration {
    /// Brings a shared store's tables to the version this build uses, in one transaction under the schema's
    /// advisory lock: all or nothing, and two migrations at once make one. Needs no key (the tables hold no secret
    /// this touches) and changes no record. Hosts of the older build keep working on the migrated tables until they
    /// are restarted onto this one; hosts of this build refuse the older tables until they are migrated.
    ///
    /// - Returns: nil when the configuration names a directory (a directory's format upgrades itself on open).
    /// - Throws: ``TokenCacheError`` `.storeNotFound` when the schema holds no store, `.unsupportedFormatVersion` for
    ///   tables newer than this build knows, `.storeUnavailable` when the server does not answer within the timeout.
    public func migrateSharedStore() throws(TokenCacheError) -> SharedStoreMigration? {
        guard let location = storageLocation as? PostgreSQLStorageLocation else { return nil }
        do {
            let (from, to) = try location.migrate()
            return SharedStoreMigration(from: from, to: to)
        } catch { throw TokenCacheError.wrap(error, directory: location.location) }
    }
}
