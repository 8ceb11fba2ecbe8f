public import TokenCache
internal import TokenCacheRecords
internal import TokenCacheSodium
internal import TokenCacheStorage

/// An operator's numbers about a store: what it holds, how its tokens stand, who uses it, how it is laid out.
///
/// Identifiers (home account ids, client ids) are given next to a keyed, non-secret fingerprint of each (16 hex
/// digits, stable for the store), so that a tool can show fingerprints only unless asked: two people comparing
/// statistics see the same fingerprints without seeing who the accounts are.
///
/// The counts are the definitions every view of a store uses: token states are ``TokenExpiryState``s, a home account
/// is a non-empty home account id holding at least one record, and app-only tokens (client credentials, with an empty
/// home account id) are counted apart, never as an account (``CacheReader/isAppOnly(_:)``).
public struct StoreStatistics: Sendable {
    /// Records per kind (damaged ones included: counted from the database, not decrypted).
    public var records: [EntityKind: Int] = [:]
    /// Access tokens ``TokenExpiryState/valid``: a silent lookup returns them as they are.
    public var accessTokensValid = 0
    /// Access tokens ``TokenExpiryState/refreshDue``: their `refresh_on` has passed or less than five minutes are left.
    public var accessTokensRefreshDue = 0
    /// Of ``accessTokensRefreshDue``, those with less than five minutes left: a lookup no longer returns them
    /// (``TokenExpiryState/expiringSoon(expiresOn:now:)``).
    public var accessTokensExpiringSoon = 0
    /// Access tokens ``TokenExpiryState/expired``.
    public var accessTokensExpired = 0
    /// The store's cap on access tokens (``TokenStore/setAccessTokenCap(_:progress:)``); nil when none is set.
    public var accessTokenCap: Int?
    /// Refresh tokens ``TokenExpiryState/expired`` by an `expires_on` of their own (most refresh tokens carry none).
    public var refreshTokensExpired = 0
    /// Home accounts (non-empty home account ids) holding at least one record; app-only tokens are not one.
    public var homeAccounts = 0
    /// Records without a home account: app-only tokens, of a client acting as itself (client credentials).
    public var appOnlyRecords = 0
    /// The home accounts with the most records, most first (at most ``largestAccountLimit``; app-only tokens are none).
    public var largestAccounts: [AccountUsage] = []
    /// Every client, by records (at most ``clientLimit``; ``clientsTruncated`` says if there were more).
    public var clients: [ClientUsage] = []
    public var clientsTruncated = false
    /// The earliest and the latest write time of any record (Unix seconds, the writers' clocks); nil when empty.
    public var oldestWrite: Int64?
    public var newestWrite: Int64?
    /// Records that failed authentication or decoding, by fingerprint.
    public var corrupt: [CorruptRecord] = []
    /// How the storage is laid out.
    public var storage: StorageLayout

    public static let largestAccountLimit = 10
    public static let clientLimit = 1_000

    /// One home account's share.
    public struct AccountUsage: Sendable, Hashable {
        /// Keyed fingerprint of the home account id.
        public var fingerprint: String
        /// The home account id (an identifier: show it only when asked).
        public var homeAccountID: String
        public var records: Int
        public var accessTokens: Int
    }

    /// One client's share.
    public struct ClientUsage: Sendable, Hashable {
        /// Keyed fingerprint of the client id (ASCII-case-insensitive).
        public var fingerprint: String
        /// The client id as first met (an identifier: show it only when asked).
        public var clientID: String
        public var accessTokens = 0
        public var refreshTokens = 0
        public var idTokens = 0
        public var appMetadata = 0

        public var records: Int { accessTokens + refreshTokens + idTokens + appMetadata }
    }

    /// The storage below the records.
    public struct StorageLayout: Sendable {
        /// One database (entity kind, or `meta`).
        public struct Database: Sendable, Hashable {
            public var name: String
            public var entries: Int
            /// B-tree levels (0 when empty, or for a backend without pages).
            public var depth: Int
            public var branchPages: Int
            public var leafPages: Int
            public var overflowPages: Int
        }

        /// A reader slot in use.
        public struct Reader: Sendable, Hashable {
            public var pid: Int32
            /// Inside a read transaction now (else the slot is kept for the process's next one).
            public var reading: Bool
            /// Its process is gone: the next open of the store clears the slot.
            public var isStale: Bool
        }

        public var databases: [Database]
        public var pageSize: Int
        public var mapSize: Int
        public var maximumMapSize: Int
        public var usedBytes: Int
        public var maxReaders: Int
        public var readers: [Reader]
        /// File name → bytes.
        public var files: [String: Int]
    }
}

extension TokenStore {
    /// Reads every record once (one snapshot, one home account at a time, so memory stays bounded) and the storage's
    /// layout.
    /// - Parameters:
    ///   - now: Unix seconds the expiry states are judged at (default: the system clock).
    ///   - progress: called with the number of records read so far (keep it cheap).
    /// - Throws: ``TokenCacheError``: the errors of ``read(_:)``; damaged records are counted in the result.
    public func statistics(now: Int64? = nil, progress: ((Int) -> Void)? = nil) throws -> StoreStatistics {
        let now = now ?? Self.currentTime()
        var statistics = StoreStatistics(storage: try storageLayout())
        try read { reader in
            var walk = StatisticsWalk(reader: reader, now: now, progress: progress)
            try reader.mappingErrors {
                // A damaged cap record is `verify`'s to report: here, as for writers, no cap applies.
                statistics.accessTokenCap = try? store.accessTokenCap(in: reader.transaction)
                try walk.run(into: &statistics)
            }
        }
        return statistics
    }
}

/// The decrypting walk behind ``TokenStore/statistics(now:progress:)``.
private struct StatisticsWalk {
    let reader: CacheReader
    let now: Int64
    let progress: ((Int) -> Void)?
    var read = 0
    var clients: [String: StoreStatistics.ClientUsage] = [:]

    init(reader: CacheReader, now: Int64, progress: ((Int) -> Void)?) {
        self.reader = reader
        self.now = now
        self.progress = progress
    }

    mutating func run(into statistics: inout StoreStatistics) throws {
        statistics.records = try reader.counts()
        var largest: [StoreStatistics.AccountUsage] = []
        try reader.forEachPartition { partition in
            var usage = StoreStatistics.AccountUsage(fingerprint: "", homeAccountID: "", records: 0, accessTokens: 0)
            func visit<E: CacheEntity>(_ type: E.Type, _ body: (inout Self, E) -> Void) throws {
                try reader.forEach(E.self, in: partition) { result in
                    count(result, into: &statistics)
                    guard case .success(let stored) = result else { return true }
                    usage.records += 1
                    if usage.homeAccountID.isEmpty, let homeAccountID = stored.entity.storable.homeAccountIDForIndex {
                        usage.homeAccountID = homeAccountID
                    }
                    body(&self, stored.entity)
                    return true
                }
            }
            try visit(Account.self) { _, _ in }
            try visit(AccessToken.self) { walk, token in
                usage.accessTokens += 1
                walk.client(token.clientID) { $0.accessTokens += 1 }
                switch TokenExpiryState(expiresOn: token.expiresOn, refreshOn: token.refreshOn, now: walk.now) {
                case .valid: statistics.accessTokensValid += 1
                case .refreshDue: statistics.accessTokensRefreshDue += 1
                case .expired: statistics.accessTokensExpired += 1
                }
                if TokenExpiryState.expiringSoon(expiresOn: token.expiresOn, now: walk.now) { statistics.accessTokensExpiringSoon += 1 }
            }
            try visit(RefreshToken.self) { walk, token in
                walk.client(token.clientID) { $0.refreshTokens += 1 }
                if let expiresOn = token.expiresOn, TokenExpiryState(expiresOn: expiresOn, refreshOn: nil, now: walk.now) == .expired {
                    statistics.refreshTokensExpired += 1
                }
            }
            try visit(IDToken.self) { walk, token in walk.client(token.clientID) { $0.idTokens += 1 } }
            guard usage.records > 0 else { return true }
            if reader.isAppOnly(partition) {
                statistics.appOnlyRecords += usage.records
                return true
            }
            statistics.homeAccounts += 1
            usage.fingerprint = Self.fingerprint(partition.prefix)
            if largest.count < StoreStatistics.largestAccountLimit || usage.records > largest.last!.records {
                largest.append(usage)
                largest.sort { ($0.records, $1.fingerprint) > ($1.records, $0.fingerprint) }
                if largest.count > StoreStatistics.largestAccountLimit { largest.removeLast() }
            }
            return true
        }
        try reader.forEach(AppMetadata.self) { result in
            count(result, into: &statistics)
            if case .success(let stored) = result { client(stored.entity.clientID) { $0.appMetadata += 1 } }
            return true
        }
        statistics.largestAccounts = largest
        statistics.clientsTruncated = overflowed
        statistics.clients = clients.values.sorted { ($0.records, $1.fingerprint) > ($1.records, $0.fingerprint) }
    }

    /// Counts a record read: progress, write times, damage; now and then lets the scanned pages go.
    private mutating func count<E: CacheEntity>(_ result: Result<StoredEntity<E>, CorruptRecord>, into statistics: inout StoreStatistics) {
        read += 1
        progress?(read)
        if read % 512 == 0 { reader.releaseScannedPages() }
        switch result {
        case .success(let stored):
            statistics.oldestWrite = min(statistics.oldestWrite ?? .max, stored.updatedAt)
            statistics.newestWrite = max(statistics.newestWrite ?? .min, stored.updatedAt)
        case .failure(let damaged):
            statistics.corrupt.append(damaged)
        }
    }

    /// Applies `change` to the usage of `clientID` (ASCII-case-insensitively), within ``StoreStatistics/clientLimit``.
    private mutating func client(_ clientID: String, _ change: (inout StoreStatistics.ClientUsage) -> Void) {
        let key = clientID.asciiLowercased
        if clients[key] == nil {
            guard clients.count < StoreStatistics.clientLimit else {
                overflowed = true
                return
            }
            clients[key] = StoreStatistics.ClientUsage(fingerprint: Self.fingerprint(reader.store.keyring.index.digest("client-fingerprint", key)), clientID: clientID)
        }
        change(&clients[key]!)
    }

    var overflowed = false

    /// 16 hex digits of a keyed digest.
    static func fingerprint(_ digest: [UInt8]) -> String { Hex.encode(digest.prefix(8)) }
}

extension TokenStore {
    /// How the storage is laid out (databases, map, reader slots, files), without reading a record: cheap at any size.
    /// - Throws: ``TokenCacheError``: the storage could not be queried.
    public func storageLayout() throws -> StoreStatistics.StorageLayout {
        let layout: StorageStatistics
        do { layout = try store.backend.statistics() } catch { throw TokenCacheError.wrap(error, directory: store.directory) }
        return StoreStatistics.StorageLayout(layout, maximumMapSize: layout.usage.maximumCapacity)
    }
}

extension StoreStatistics.StorageLayout {
    /// Reader slots held now by a process (stale ones included: their process is gone, the next open clears them).
    public var readersInUse: Int { readers.count }
    /// Reader slots of processes that are gone.
    public var staleReaders: Int { readers.filter(\.isStale).count }

    init(_ statistics: StorageStatistics, maximumMapSize: Int) {
        databases = statistics.spaces.sorted { $0.key.name < $1.key.name }.map { key, space in
            Database(
                name: key.name, entries: space.entries, depth: space.depth, branchPages: space.branchPages, leafPages: space.leafPages,
                overflowPages: space.overflowPages
            )
        }
        pageSize = statistics.pageSize
        mapSize = statistics.usage.currentCapacity
        self.maximumMapSize = maximumMapSize
        usedBytes = statistics.usage.usedBytes
        maxReaders = statistics.usage.maxReaders
        readers = statistics.readers.map { Reader(pid: $0.pid, reading: $0.transactionID != nil, isStale: $0.isStale) }
        files = statistics.files
    }
}
