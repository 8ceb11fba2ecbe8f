import Foundation
internal import TokenCacheStorage
internal import TokenCacheSodium
internal import TokenCacheRecords

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
    package let store: RecordStore
    /// The configuration the store was opened with. Its ``Configuration/environmentAliases`` are the alias groups
    /// that ``ingest(_:context:)``, ``silentLookup(_:)``, ``accounts(clientID:environment:username:)`` and
    /// ``removeAccount(homeAccountID:clientID:environment:)`` use.
    public let configuration: Configuration

    private init(store: RecordStore, configuration: Configuration) {
        self.store = store
        self.configuration = configuration
    }

    /// Opens an existing store.
    ///
    /// A store already open in this process is shared, not opened twice (LMDB allows one environment per file per
    /// process). A version-1 store opened writable is upgraded to the current format first (FORMAT.md §7).
    ///
    /// - Returns: The open store. Opened read-only when the configuration asks for it, or when the store's format
    ///   write version is newer than this library's.
    /// - Throws: ``TokenCacheError``: `.storeNotFound`, `.wrongKey`, `.keyUnavailable`, `.insecurePermissions`,
    ///   `.corruptStore`, `.unsupportedFormatVersion`, `.unsupportedEnvironment` (network filesystem, unsafe liblmdb
    ///   version, libsodium unusable). A writable open commits a transaction, so it can also throw
    ///   `.staleLockTable`, `.storageFull` and `.ioFailure`.
    public static func open(_ configuration: Configuration) throws -> TokenStore {
        try initializeSodium()
        do {
            return TokenStore(store: try RecordStore.open(configuration.storeOptions, create: false, now: currentTime()), configuration: configuration)
        } catch { throw TokenCacheError.wrap(error, directory: configuration.directory) }
    }

    /// Creates a new store (directory 0700, files 0600) with a fresh random data key wrapped by the configured key.
    ///
    /// The root key is read (or the passphrase stretched) before anything is created: when it cannot be had — a key
    /// file that does not exist yet, a malformed `TOKEN_CACHE_KEY` — nothing is left behind. The key file is not
    /// created here: make it first with ``KeyFile/create(at:)`` (or `cachetool init`, which makes both). A data file
    /// that an interrupted creation left empty and without a header is completed, not refused.
    /// - Returns: The new, open store.
    /// - Throws: ``TokenCacheError`` `.storeAlreadyExists` if there is one (also when another process created it
    ///   first), `.readOnly` if the configuration is read-only, `.keyUnavailable` when the key cannot be had,
    ///   plus the errors of ``open(_:)``.
    public static func create(_ configuration: Configuration) throws -> TokenStore {
        try initializeSodium()
        do {
            return TokenStore(store: try RecordStore.open(configuration.storeOptions, create: true, now: currentTime()), configuration: configuration)
        } catch { throw TokenCacheError.wrap(error, directory: configuration.directory) }
    }

    /// Opens the store, creating it first if there is none.
    ///
    /// Safe against a race with another process doing the same: if that process creates the store first, this one
    /// opens it. As ``create(_:)``, it creates nothing before the key is in hand: on a first run whose key file does
    /// not exist yet it throws `.keyUnavailable` and leaves no directory or file behind.
    /// - Returns: The open store.
    /// - Throws: ``TokenCacheError``: the errors of ``open(_:)`` and ``create(_:)`` other than `.storeNotFound` and
    ///   `.storeAlreadyExists`.
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

    package static func currentTime() -> Int64 { Int64(Date().timeIntervalSince1970) }

    /// Whether ``create(_:)`` completed a store whose creation an older build left unfinished (an empty data file
    /// without a header), rather than creating one in an empty place: `cachetool init` says so.
    package var completedInterruptedCreation: Bool { store.completedInterruptedCreation }

    /// Runs `body` on one consistent snapshot of the store.
    ///
    /// `body` runs synchronously, on the calling thread; the ``CacheReader`` is valid only inside it. A read does not
    /// wait for writers (only, briefly, for a growth of the map in this process), and its snapshot does not change
    /// while `body` runs, whatever other threads or processes commit. Keep `body` short: an open snapshot keeps the
    /// pages it sees from being reused, so the file grows.
    /// - Returns: What `body` returns.
    /// - Throws: An error of the caller's own type that `body` throws, unchanged; the library's failures inside
    ///   `body` as ``TokenCacheError``. ``TokenCacheError``: `.readersExhausted` when the reader table
    ///   is full, `.unsupportedEnvironment` in a forked child, `.corruptStore` or `.ioFailure` when LMDB fails.
    public func read<R>(_ body: (CacheReader) throws -> R) throws -> R {
        try store.read(body)
    }

    /// Runs `body` in one write transaction and commits it durably (fsync) when `body` returns; if `body`
    /// throws, nothing it wrote is kept. Writers of all processes are serialized.
    ///
    /// `body` may run more than once (when the map must grow, the transaction is retried from the start), so it
    /// must not have side effects outside the writer.
    /// - Returns: What `body` returns, once the transaction has committed.
    /// - Throws: An error of the caller's own type that `body` throws, unchanged (nothing is written then); the
    ///   library's failures inside `body` as ``TokenCacheError``. ``TokenCacheError``: `.readOnly`;
    ///   `.unsupportedEnvironment` for a write inside a write of the same store on this thread, or in a forked
    ///   child; `.conflict` or `.unsupportedFormatVersion` when another process changed or upgraded the store
    ///   header since this store was opened; `.staleLockTable`; `.storageFull` when the map reached
    ///   ``Configuration/maximumMapSize`` or the disk is full; `.ioFailure` when the commit fails. A failed write
    ///   keeps nothing.
    public func write<R>(_ body: (CacheWriter) throws -> R) throws -> R {
        try store.write(now: Self.currentTime(), body)
    }

    /// ``write(_:)`` for a transaction that only removes records: at the store's size cap it may use the room kept
    /// in reserve beyond it (a delete in LMDB's copy-on-write tree needs new pages before it frees any), so that a
    /// full store can still be signed out of, purged and emptied.
    package func removing<R>(_ body: (CacheWriter) throws -> R) throws -> R {
        try store.write(now: Self.currentTime(), freeingSpace: true, body)
    }

    // MARK: One-record conveniences (each its own transaction)

    /// Reads the entity stored under `key`, in a read transaction of its own.
    /// - Returns: The entity with its revision and write time, or nil if none is stored.
    /// - Throws: ``TokenCacheError`` `.corruptRecord` (with the record's fingerprint) if the record is damaged,
    ///   `.invalidArgument` for a key type this cache does not store, and the errors of ``read(_:)``.
    public func get<Key: CacheEntityKey>(_ key: Key) throws -> StoredEntity<Key.Entity>? {
        try read { try $0.get(key) }
    }

    /// Inserts or replaces the entity stored under `entity.key`, in a durable write transaction of its own.
    ///
    /// Writes exactly this record: unlike ``ingest(_:context:)``, it derives nothing and deletes no superseded
    /// access token. An unconditional write replaces a damaged record under the same key.
    /// - Parameters:
    ///   - entity: The record to write; its ``CacheEntity/key`` says where.
    ///   - expectedRevision: For compare-and-swap: `nil` writes unconditionally; `0` requires that no record exists;
    ///     `n` requires that the stored record has revision `n`.
    /// - Returns: The record's new revision.
    /// - Throws: ``TokenCacheError``: `.invalidArgument` for a malformed entity (an empty required field, a malformed
    ///   scope, an additional field that shadows a modelled one); `.conflict` (with
    ///   ``TokenCacheError/currentRevision``) when `expectedRevision` does not match or the stored record is damaged;
    ///   `.recordTooLarge`; and the errors of ``write(_:)``.
    @discardableResult
    public func put<Entity: CacheEntity>(_ entity: Entity, expectedRevision: UInt64? = nil) throws -> UInt64 {
        try write { try $0.put(entity, expectedRevision: expectedRevision) }
    }

    /// Removes the entity stored under `key`, in a durable write transaction of its own. An unconditional delete
    /// also removes a damaged record under the key.
    /// - Parameters:
    ///   - key: The key of the record to remove.
    ///   - expectedRevision: As for ``put(_:expectedRevision:)``.
    /// - Returns: Whether a record was removed.
    /// - Throws: ``TokenCacheError``: `.conflict` (with ``TokenCacheError/currentRevision``) when `expectedRevision`
    ///   does not match or the stored record is damaged; `.invalidArgument` for a key type this cache does not store;
    ///   and the errors of ``write(_:)``.
    @discardableResult
    public func delete<Key: CacheEntityKey>(_ key: Key, expectedRevision: UInt64? = nil) throws -> Bool {
        try removing { try $0.delete(key, expectedRevision: expectedRevision) }
    }

    /// Every entity of one kind that matches `filter`, from one snapshot.
    ///
    /// Decrypts every record it returns, so its cost grows with the number of matching records: for tools and
    /// maintenance, not for the silent flow. A filter by home account (or, for app metadata, by client) reads only
    /// that key prefix.
    /// - Returns: The readable records, and the damaged ones by fingerprint (never their content).
    /// - Throws: ``TokenCacheError`` `.invalidArgument` for an entity type this cache does not store, and the errors
    ///   of ``read(_:)``. Damaged records are reported in the result, not thrown.
    public func list<Entity: CacheEntity>(_ type: Entity.Type, filter: RecordFilter = .all) throws -> RecordList<Entity> {
        try read { try $0.list(type, filter: filter) }
    }

    /// The entities of all five kinds that match `filter`, from one snapshot: ``list(_:filter:)`` for each kind.
    /// - Returns: The readable records by kind, and every damaged record met, by fingerprint.
    /// - Throws: ``TokenCacheError``: the errors of ``read(_:)``. Damaged records are reported in the result.
    public func snapshot(filter: RecordFilter = .all) throws -> CacheSnapshot {
        try read { try $0.snapshot(filter: filter) }
    }

    /// Identifies the newest committed state of the store, whichever process committed it: every commit that
    /// changes a record changes it (LMDB's last transaction id). An answer read while it had a value stays the
    /// store's answer for as long as it keeps that value, which is what an in-process cache of answers checks on
    /// every hit. Costs a read of the map's meta page, no transaction.
    public var lastCommitID: Int { store.backend.lastCommitID }

    /// Whether the store's header is no longer the one this handle opened: another handle rekeyed the store (a new
    /// passphrase or key file, a data-key rotation) or upgraded its format. Reads go on, and so do writes, which follow
    /// a rekey or rotation (the data keys this handle holds, or the new one its root key opens); a header it cannot
    /// follow (a format upgrade, a new root key and a new data key both) has writes refused with `.conflict` until the
    /// store is opened again. One read of one small record.
    public func headerChangedSinceOpen() throws -> Bool {
        try read { reader in
            try reader.transaction.withValue(in: KeySpace.meta, forKey: FormatConstants.headerKey) { $0.withUnsafeBytes { !$0.elementsEqual(store.headerBytes) } } ?? true
        }
    }

    /// The bytes the store's records take at rest (the data file of a store directory), without a transaction; nil for
    /// a store in memory. For `cachetool bench`'s size figures.
    package var sizeAtRest: Int? { configuration.storage.sizeAtRest() }

    /// Facts about the store, for `cachetool` and diagnostics. Contains no secret and no identifier.
    /// - Returns: Format versions, key protection, map geometry, reader-table use and record counts.
    /// - Throws: ``TokenCacheError``: the errors of ``read(_:)`` (the record counts are read in a transaction).
    public func info() throws -> StoreInfo {
        let usage = store.backend.usage()
        let (counts, rotationPending) = try read { (try $0.counts(), try store.isRotationPending(in: $0.transaction)) }
        let header = store.keyring.header
        return StoreInfo(
            directory: store.directory,
            storeID: Hex.encode(header.storeID),
            readVersion: header.readVersion,
            writeVersion: header.writeVersion,
            keyProtection: header.rootKind == .passphrase ? "passphrase (Argon2id)" : "key",
            dataKeyCount: header.wrappedKeys.count,
            activeDataKeyID: store.keyring.activeKeyID,
            cipher: StoreCipher(store.keyring.activeCipher),
            dataKeyRotationPending: rotationPending,
            readOnly: store.readOnly,
            formatWritable: header.writeVersion <= FormatConstants.writeVersion,
            mapSize: usage.currentCapacity,
            maximumMapSize: usage.maximumCapacity,
            usedBytes: usage.usedBytes,
            readersInUse: usage.readersInUse,
            maxReaders: usage.maxReaders,
            recordCounts: counts,
            lmdbVersion: StorageLibraries.lmdb,
            sodiumVersion: Sodium.versionString
        )
    }
}

/// Facts about an open store. No secrets and no identifiers.
public struct StoreInfo: Sendable {
    /// The store directory, as configured.
    public var directory: String
    /// Random, not secret: distinguishes stores (and binds every record to this one).
    public var storeID: String
    /// The format read version of the store header (FORMAT.md §7).
    public var readVersion: UInt16
    /// The format write version of the store header (FORMAT.md §7).
    public var writeVersion: UInt16
    /// How the root key is obtained: `key` (a key file or a raw key) or `passphrase (Argon2id)`.
    public var keyProtection: String
    /// The number of data keys in the header.
    public var dataKeyCount: Int
    /// The id of the data key new records are sealed with (the largest).
    public var activeDataKeyID: UInt32
    /// The cipher new records are sealed with: the active data key's.
    public var cipher: StoreCipher
    /// Whether a data-key rotation (or an upgrade's conversion to another cipher) is under way: some records may still be
    /// sealed under an older key, and with its cipher. Any writable open continues it.
    public var dataKeyRotationPending: Bool
    /// Whether this handle was opened read-only (asked for, or forced by a newer format write version).
    public var readOnly: Bool
    /// Whether this library may write the store's format version at all (its write version is not newer).
    public var formatWritable: Bool
    /// The current size of LMDB's memory map, in bytes. It grows by doubling when a write needs more.
    public var mapSize: Int
    /// The size beyond which the map does not grow (writes then fail with `.storageFull`), in bytes.
    public var maximumMapSize: Int
    /// The bytes of the data file in use: the highest page in use, plus one, times the page size.
    public var usedBytes: Int
    /// Reader-table slots used, across all processes: a high-water mark, not a count of live readers.
    public var readersInUse: Int
    /// The size of the reader table shared by every process using the store.
    public var maxReaders: Int
    /// Records of each kind, damaged ones included, counted without decrypting anything.
    public var recordCounts: [EntityKind: Int]
    /// The version string of the liblmdb loaded at run time.
    public var lmdbVersion: String
    /// The version string of the libsodium loaded at run time.
    public var sodiumVersion: String
}
