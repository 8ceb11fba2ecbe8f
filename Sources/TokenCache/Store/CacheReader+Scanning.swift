package import TokenCacheStorage
internal import TokenCacheRecords

/// The records of one home account: its tenant profiles (Account records), access, refresh and ID tokens.
///
/// Every per-account record is stored under a key that starts with a keyed hash of its home account id
/// (FORMAT.md §4.3), so one account's records sit together in each kind's key order, and a partition is read by one
/// range scan per kind. MSAL's caches partition the same way (by home account id) for the same reason. A partition
/// is an opaque handle, valid in any transaction of the store it came from; partitions compare in storage order.
/// App metadata is per client, not per account, and belongs to no partition.
public struct HomeAccountPartition: Sendable, Hashable, Comparable {
    // The 16-byte key prefix as two big-endian halves: no allocation, and tuple order is key order.
    private let high: UInt64
    private let low: UInt64

    init(prefix: some Collection<UInt8>) {
        precondition(prefix.count == CacheReader.partitionPrefixLength, "a partition prefix is 16 bytes")
        high = prefix.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
        low = prefix.dropFirst(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The key prefix every record of the partition starts with.
    package var prefix: [UInt8] {
        (0..<16).map { index in UInt8(truncatingIfNeeded: (index < 8 ? high : low) >> (8 * (7 - index % 8))) }
    }

    /// Storage order: the order in which ``CacheReader/forEachPartition(_:)`` visits partitions.
    public static func < (lhs: Self, rhs: Self) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }
}

/// Streaming reads, for tools that walk a whole store: each record is decoded, handed over and forgotten, so memory
/// stays bounded however large the store is (``list(_:filter:)`` keeps every record it returns).
extension CacheReader {
    /// The length of a partition's key prefix: one BLAKE2b-128 digest.
    static let partitionPrefixLength = 16

    /// The partition of the records of `homeAccountID` (ASCII-case-insensitively; empty for app-only tokens).
    public func partition(homeAccountID: String) -> HomeAccountPartition {
        HomeAccountPartition(prefix: store.keyring.index.accountPrefix(homeAccountID))
    }

    /// Whether `partition` holds the app-only tokens: those with an empty home account id, of a client acting as
    /// itself (client credentials). They belong to no person, so no view counts them as a home account.
    public func isAppOnly(_ partition: HomeAccountPartition) -> Bool {
        partition == self.partition(homeAccountID: "")
    }

    /// The partition `stored` was read from; nil for app metadata.
    public func partition<Entity: CacheEntity>(of stored: StoredEntity<Entity>) -> HomeAccountPartition? {
        guard Entity.self != AppMetadata.self, stored.record.key.count >= Self.partitionPrefixLength else { return nil }
        return HomeAccountPartition(prefix: stored.record.key.prefix(Self.partitionPrefixLength))
    }

    /// Visits, in storage order, every record of a kind that matches `filter`, until `body` returns false. A damaged
    /// record is visited as a failure (by fingerprint, never its content) and the walk goes on.
    /// - Throws: ``TokenCacheError`` `.invalidArgument` for an entity type this cache does not store, errors of the
    ///   storage, and whatever `body` throws.
    public func forEach<Entity: CacheEntity>(
        _ type: Entity.Type, filter: RecordFilter = .all, _ body: (Result<StoredEntity<Entity>, CorruptRecord>) throws -> Bool
    ) throws {
        let storable = Entity.storableType
        try mappingErrors { try forEachCast(storable, prefix: scanPrefix(storable, filter: filter), filter: filter, body) }
    }

    /// As ``forEach(_:filter:_:)``, within one partition. App metadata belongs to none: it visits nothing.
    public func forEach<Entity: CacheEntity>(
        _ type: Entity.Type, in partition: HomeAccountPartition, filter: RecordFilter = .all,
        _ body: (Result<StoredEntity<Entity>, CorruptRecord>) throws -> Bool
    ) throws {
        guard Entity.self != AppMetadata.self else { return }
        if let homeAccountID = filter.homeAccountID, self.partition(homeAccountID: homeAccountID) != partition { return }
        let storable = Entity.storableType
        try mappingErrors { try forEachCast(storable, prefix: partition.prefix, filter: filter, body) }
    }

    private func forEachCast<S: StorableEntity, Entity: CacheEntity>(
        _ type: S.Type, prefix: [UInt8], filter: RecordFilter, _ body: (Result<StoredEntity<Entity>, CorruptRecord>) throws -> Bool
    ) throws {
        try forEachStored(S.self, prefix: prefix, filter: filter) { result in
            try body(result.map { $0 as! StoredEntity<Entity> })
        }
    }

    /// Visits, in storage order, every partition that holds at least one record (of any per-account kind, damaged
    /// ones included), each once, until `body` returns false. Reads keys only: one positioned read per kind per
    /// partition, no decryption.
    public func forEachPartition(_ body: (HomeAccountPartition) throws -> Bool) throws {
        let databases = [EntityKind.account, .accessToken, .refreshToken, .idToken].map(KeySpace.init)
        var start: [UInt8] = []
        while true {
            var next: [UInt8]? = nil
            for database in databases {
                try mappingErrors {
                    try transaction.forEach(in: database, from: start) { key, _ in key.withUnsafeBytes { key in
                        // Keys are digests, at least a partition prefix long; a shorter one is not a record's key.
                        guard key.count >= Self.partitionPrefixLength else { return true }
                        let prefix = Array(key.prefix(Self.partitionPrefixLength))
                        if next.map({ prefix.lexicographicallyPrecedes($0) }) ?? true { next = prefix }
                        return false
                    } }
                }
            }
            guard let next, try body(HomeAccountPartition(prefix: next)) else { return }
            // The smallest key past every key of this partition: the prefix plus one, as a big-endian number.
            guard let following = Self.successor(of: next) else { return }
            start = following
        }
    }

    /// The byte string that follows every string starting with `prefix` in key order (`prefix` plus one, as a
    /// big-endian number); nil when `prefix` is all `0xFF` (nothing follows).
    static func successor(of prefix: [UInt8]) -> [UInt8]? {
        var result = prefix
        for index in result.indices.reversed() {
            if result[index] == 0xFF {
                result[index] = 0
            } else {
                result[index] += 1
                return result
            }
        }
        return nil
    }

    /// Lets the storage drop the pages read so far from this process's resident memory (an LMDB store's map; they
    /// stay in the operating system's page cache). Changes no result. A walk over a whole store calls it every few
    /// thousand records, so that the walk's memory stays bounded instead of growing to the size of the file.
    public func releaseScannedPages() {
        store.releaseScannedPages(in: transaction)
    }
}

extension RecordStore {
    /// ``CacheReader/releaseScannedPages()`` for a transaction of the backend: what maintenance work that walks the
    /// store in bounded transactions (placement, rotation) calls after each one.
    package func releaseScannedPages(in txn: any RecordReading) {
        // The store header is a view into the map wherever the map is.
        _ = try? txn.withValue(in: KeySpace.meta, forKey: FormatConstants.headerKey) { view in
            txn.releaseResidentPages(around: view)
        }
    }
}
