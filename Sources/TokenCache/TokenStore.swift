import Foundation
internal import TokenCacheLMDB
internal import TokenCacheSodium

/// An encrypted, multi-process-safe store for MSAL unified-cache entities, on LMDB.
///
/// For example:
///
/// ```swift
/// let cache = try TokenStore.open(.fromEnvironment())
/// try cache.write { writer in
///     try writer.put(accessToken)
///     try writer.put(refreshToken)       // both commit together, or neither does
/// }
/// let stored = try cache.get(accessToken.key)
/// ```
///
/// Instances are `Sendable` and cheap to share; opening the same store twice in one process shares one LMDB
/// environment. Transactions are synchronous: never `await` inside one, never start a write inside a write.
public final class TokenStore: Sendable {
    let store: RecordStore
    public let configuration: Configuration

    private init(store: RecordStore, configuration: Configuration) {
        self.store = store
        self.configuration = configuration
    }

    /// Opens an existing store.
    /// - Throws: ``TokenCacheError``: `.storeNotFound`, `.wrongKey`, `.keyUnavailable`, `.insecurePermissions`,
    ///   `.corruptStore`, `.unsupportedFormatVersion`, `.unsupportedEnvironment`.
    public static func open(_ configuration: Configuration) throws -> TokenStore {
        try initializeSodium()
        do {
            return TokenStore(store: try RecordStore.open(configuration, create: false, now: currentTime()), configuration: configuration)
        } catch { throw TokenCacheError.wrap(error, directory: configuration.directory) }
    }

    /// Creates a new store (directory 0700, files 0600) with a fresh random data key wrapped by the configured key.
    /// - Throws: ``TokenCacheError`` `.storeAlreadyExists` if there is one, plus the errors of ``open(_:)``.
    public static func create(_ configuration: Configuration) throws -> TokenStore {
        try initializeSodium()
        do {
            return TokenStore(store: try RecordStore.open(configuration, create: true, now: currentTime()), configuration: configuration)
        } catch { throw TokenCacheError.wrap(error, directory: configuration.directory) }
    }

    /// Opens the store, creating it first if there is none.
    public static func openOrCreate(_ configuration: Configuration) throws -> TokenStore {
        do {
            return try open(configuration)
        } catch let error as TokenCacheError where error.code == .storeNotFound {
            do {
                return try create(configuration)
            } catch let error as TokenCacheError where error.code == .storeAlreadyExists {
                return try open(configuration)  // another process won the race
            }
        }
    }

    private static func initializeSodium() throws(TokenCacheError) {
        do { try Sodium.initialize() } catch {
            throw TokenCacheError(.unsupportedEnvironment, "libsodium failed to initialize")
        }
    }

    static func currentTime() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// Runs `body` on one consistent snapshot of the store.
    ///
    /// - Throws: ``TokenCacheError``; an error of the caller's own type that `body` throws comes back unchanged.
    public func read<R>(_ body: (CacheReader) throws -> R) throws -> R {
        try store.read(body)
    }

    /// Runs `body` in one write transaction and commits it durably (fsync) when `body` returns; if `body`
    /// throws, nothing it wrote is kept. Writers of all processes are serialized.
    ///
    /// `body` may run more than once (when the map must grow, the transaction is retried from the start), so it
    /// must not have side effects outside the writer.
    ///
    /// - Throws: ``TokenCacheError``; an error of the caller's own type that `body` throws comes back unchanged
    ///   (and nothing is written).
    public func write<R>(_ body: (CacheWriter) throws -> R) throws -> R {
        try store.checkWritable()
        let now = Self.currentTime()
        do {
            return try store.environment.write { transaction in
                try store.checkHeaderUnchanged(in: transaction)
                return try body(CacheWriter(store: store, transaction: transaction, now: now))
            }
        } catch { throw TokenCacheError.wrapKeepingCallerErrors(error, directory: store.directory) }
    }

    // MARK: One-record conveniences (each its own transaction)

    public func get<Key: CacheEntityKey>(_ key: Key) throws -> StoredEntity<Key.Entity>? {
        try read { try $0.get(key) }
    }

    @discardableResult
    public func put<Entity: CacheEntity>(_ entity: Entity, expectedRevision: UInt64? = nil) throws -> UInt64 {
        try write { try $0.put(entity, expectedRevision: expectedRevision) }
    }

    @discardableResult
    public func delete<Key: CacheEntityKey>(_ key: Key, expectedRevision: UInt64? = nil) throws -> Bool {
        try write { try $0.delete(key, expectedRevision: expectedRevision) }
    }

    public func list<Entity: CacheEntity>(_ type: Entity.Type, filter: RecordFilter = .all) throws -> RecordList<Entity> {
        try read { try $0.list(type, filter: filter) }
    }

    public func snapshot(filter: RecordFilter = .all) throws -> CacheSnapshot {
        try read { try $0.snapshot(filter: filter) }
    }

    /// Facts about the store, for `cachetool` and diagnostics. Contains no secret and no identifier.
    public func info() throws -> StoreInfo {
        let environmentInfo = store.environment.info
        let counts = try read { try $0.counts() }
        let header = store.keyring.header
        return StoreInfo(
            directory: store.directory,
            storeID: Hex.encode(header.storeID),
            readVersion: header.readVersion,
            writeVersion: header.writeVersion,
            keyProtection: header.rootKind == .passphrase ? "passphrase (Argon2id)" : "key",
            dataKeyCount: header.wrappedKeys.count,
            activeDataKeyID: store.keyring.activeKeyID,
            readOnly: store.readOnly,
            formatWritable: header.writeVersion <= FormatConstants.writeVersion,
            mapSize: environmentInfo.mapSize,
            maximumMapSize: store.maximumMapSize,
            usedBytes: (environmentInfo.lastPageNumber + 1) * environmentInfo.pageSize,
            readersInUse: environmentInfo.readersInUse,
            maxReaders: environmentInfo.maxReaders,
            recordCounts: counts,
            lmdbVersion: Environment.libraryVersion,
            sodiumVersion: Sodium.versionString
        )
    }
}

/// Facts about an open store. No secrets and no identifiers.
public struct StoreInfo: Sendable {
    public var directory: String
    /// Random, not secret: distinguishes stores (and binds every record to this one).
    public var storeID: String
    public var readVersion: UInt16
    public var writeVersion: UInt16
    public var keyProtection: String
    public var dataKeyCount: Int
    public var activeDataKeyID: UInt32
    /// Whether this handle was opened read-only (asked for, or forced by a newer format write version).
    public var readOnly: Bool
    /// Whether this library may write the store's format version at all (its write version is not newer).
    public var formatWritable: Bool
    public var mapSize: Int
    public var maximumMapSize: Int
    public var usedBytes: Int
    public var readersInUse: Int
    public var maxReaders: Int
    public var recordCounts: [EntityKind: Int]
    public var lmdbVersion: String
    public var sodiumVersion: String
}
