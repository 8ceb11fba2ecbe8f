import Foundation
package import TokenCacheStorage
internal import TokenCacheRecords

/// Read access to the store inside ``TokenStore/read(_:)``: one consistent snapshot.
///
/// Valid only inside the closure that received it; it must not escape. Not `Sendable`: LMDB binds a
/// transaction to the thread that runs it.
public class CacheReader {
    package let store: RecordStore
    package let transaction: any RecordReading

    init(store: RecordStore, transaction: any RecordReading) {
        self.store = store
        self.transaction = transaction
    }

    /// The entity stored under `key`, or nil.
    /// - Throws: ``TokenCacheError`` `.corruptRecord` (with the record's fingerprint) if the record is damaged.
    public func get<Key: CacheEntityKey>(_ key: Key) throws -> StoredEntity<Key.Entity>? {
        let storable = Key.Entity.storableType
        return try mappingErrors { try getStorable(storable, key) }
    }

    private func getStorable<S: StorableEntity, Key: CacheEntityKey>(_ type: S.Type, _ key: Key) throws -> StoredEntity<Key.Entity>? {
        try stored(S.self, entryKey: S.storageKey(for: key as! S.Key, index: store.keyring.index)).map { $0 as! StoredEntity<Key.Entity> }
    }

    /// The entity whose storage key (FORMAT.md §4.3, from its fields) is `entryKey`, or nil; damage throws
    /// `.corruptRecord`.
    package func stored<S: StorableEntity>(_ type: S.Type, entryKey: [UInt8]) throws -> StoredEntity<S>? {
        guard let storageKey = try location(S.self, of: entryKey, damagedMayMatch: true)
        else { return nil }
        let database = KeySpace(S.kind)
        let result = try transaction.withValue(in: database, forKey: storageKey) { value in value.withUnsafeBytes { value in
            store.decode(S.self, value: value, key: storageKey)
        } }
        switch result {
        case nil: return nil
        case .success(let stored)?: return stored
        case .failure(let corrupt)?:
            throw TokenCacheError(.corruptRecord, corrupt.description, recordFingerprint: corrupt.fingerprint)
        }
    }

    /// Every entity of a kind that matches `filter`; damaged records are listed in `corrupt`, never returned.
    public func list<Entity: CacheEntity>(_ type: Entity.Type, filter: RecordFilter = .all) throws -> RecordList<Entity> {
        let storable = Entity.storableType
        return try mappingErrors { try listStorable(storable, as: Entity.self, filter: filter) }
    }

    private func listStorable<S: StorableEntity, Entity: CacheEntity>(
        _ type: S.Type, as entityType: Entity.Type, filter: RecordFilter
    ) throws -> RecordList<Entity> {
        var result = RecordList<S>(records: [], corrupt: [])
        try forEachStored(S.self, filter: filter) { stored in
            switch stored {
            case .success(let stored): result.records.append(stored)
            case .failure(let corrupt): result.corrupt.append(corrupt)
            }
        }
        return result as! RecordList<Entity>
    }

    /// Visits, in storage order, every record of a kind that matches `filter` (a damaged one as a failure), one at a
    /// time: for readers that keep less than every entity (an export keeps keys).
    package func forEachStored<S: StorableEntity>(
        _ type: S.Type, filter: RecordFilter, _ body: (Result<StoredEntity<S>, CorruptRecord>) throws -> Void
    ) throws {
        try forEachStored(S.self, prefix: scanPrefix(S.self, filter: filter), filter: filter) { try body($0); return true }
    }

    /// The key prefix that holds every record of a kind that `filter` can match: an account's partition, or for app
    /// metadata a client's; empty (the whole database) when the filter names neither.
    func scanPrefix<S: StorableEntity>(_ type: S.Type, filter: RecordFilter) -> [UInt8] {
        let index = store.keyring.index
        if S.kind == .appMetadata {
            if let clientID = filter.clientID { return AppMetadata.clientPrefix(clientID, index: index) }
        } else if let homeAccountID = filter.homeAccountID {
            return index.accountPrefix(homeAccountID)
        }
        return []
    }

    /// Visits, in storage order, the records of a kind under `prefix` that match `filter`, until `body` returns false.
    func forEachStored<S: StorableEntity>(
        _ type: S.Type, prefix: [UInt8], filter: RecordFilter, _ body: (Result<StoredEntity<S>, CorruptRecord>) throws -> Bool
    ) throws {
        try transaction.forEach(in: KeySpace(S.kind), prefix: prefix) { key, value in try key.withUnsafeBytes { key in try value.withUnsafeBytes { value in
            let decoded = store.decode(S.self, value: value, key: Array(key))
            if case .success(let stored) = decoded, !Self.matches(stored.entity, filter) { return true }
            return try body(decoded)
        } } }
    }

    private static func matches<S: StorableEntity>(_ entity: S, _ filter: RecordFilter) -> Bool {
        if let clientID = filter.clientID, !(entity.clientIDForFilter.map { ASCII.equalIgnoringCase($0, clientID) } ?? false) {
            return false
        }
        if let homeAccountID = filter.homeAccountID,
            !(entity.homeAccountIDForIndex.map { ASCII.equalIgnoringCase($0, homeAccountID) } ?? false)
        {
            return false
        }
        return true
    }

    /// All five kinds at once, from one snapshot.
    public func snapshot(filter: RecordFilter = .all) throws -> CacheSnapshot {
        var snapshot = CacheSnapshot()
        func collect<E: CacheEntity>(_ type: E.Type, into keyPath: WritableKeyPath<CacheSnapshot, [StoredEntity<E>]>) throws {
            let list = try self.list(type, filter: filter)
            snapshot[keyPath: keyPath] = list.records
            snapshot.corrupt += list.corrupt
        }
        try collect(Account.self, into: \.accounts)
        try collect(AccessToken.self, into: \.accessTokens)
        try collect(RefreshToken.self, into: \.refreshTokens)
        try collect(IDToken.self, into: \.idTokens)
        try collect(AppMetadata.self, into: \.appMetadata)
        return snapshot
    }

    /// Number of records of each kind (corrupt ones included), without decrypting anything.
    public func counts() throws -> [EntityKind: Int] {
        var counts: [EntityKind: Int] = [:]
        for kind in EntityKind.allCases {
            counts[kind] = try mappingErrors { try transaction.count(in: KeySpace(kind)) }
        }
        return counts
    }

    /// The key the record with storage key `key` (§4.3's key from its fields) is stored under. Only an access token
    /// can be elsewhere (a bucket's lone token, under the bucket prefix), so only for access tokens is the database
    /// asked, and nil means absent (``RecordStore/accessTokenLocation(entryKey:damagedMayMatch:in:)``); any other
    /// kind is under `key` itself, present or not, which the caller's own read or write finds out.
    func location<S: StorableEntity>(_ type: S.Type, of key: [UInt8], damagedMayMatch: Bool) throws -> [UInt8]? {
        guard S.kind == .accessToken else { return key }
        return try store.accessTokenLocation(entryKey: key, damagedMayMatch: damagedMayMatch, in: transaction)
    }
}

@available(*, unavailable)
extension CacheReader: Sendable {}

/// Read-write access inside ``TokenStore/write(_:)``. Everything written in one closure commits
/// together, durably, or not at all.
///
/// A writer exists only inside a write transaction the store began after checking that it may write (not opened
/// read-only, format not newer), so its methods do not check that again.
public final class CacheWriter: CacheReader {
    package let writeTransaction: any RecordWriting
    package let now: Int64
    /// The store's access-token cap as this transaction read it: nil until read, then `.some(nil)` for no cap.
    var loadedCap: Int?? = nil
    /// Access tokens this transaction evicted to keep the store under its cap.
    public internal(set) var accessTokensEvicted = 0
    /// Where the next expiry sweep starts, once this transaction swept (nil before): the store takes it when the
    /// transaction commits.
    var sweepCursor: [UInt8]? = nil
    /// Where this transaction's first sweep starts when not at the store's cursor: the one a planned write's read plan
    /// fetched from.
    var sweepStart: [UInt8]? = nil

    init(store: RecordStore, transaction: any RecordWriting, now: Int64) {
        writeTransaction = transaction
        self.now = now
        super.init(store: store, transaction: transaction)
    }

    /// Inserts or replaces the entity stored under `entity.key`.
    ///
    /// - Parameter expectedRevision: for compare-and-swap: `nil` writes unconditionally; `0` requires that no
    ///   record exists; `n` requires that the stored record has revision `n`.
    /// - Returns: The record's new revision.
    /// - Throws: ``TokenCacheError``: `.invalidArgument` for a malformed entity, `.conflict` (with
    ///   `currentRevision`) when `expectedRevision` does not match, `.recordTooLarge`, `.readOnly`.
    @discardableResult
    public func put<Entity: CacheEntity>(_ entity: Entity, expectedRevision: UInt64? = nil) throws -> UInt64 {
        return try mappingErrors { try putStorable(entity.storable, expectedRevision: expectedRevision) }
    }

    /// `continuing` is the revision of a version of the record this transaction removed before writing it again
    /// (intersect-delete evicts the token a response replaces): the new revision follows it, so revisions keep
    /// growing across the replacement.
    /// `entryKey`, when given, is the entity's storage key already derived (an ingest plan's).
    /// `intoEmptyBucket`: this transaction saw the access token's bucket empty (it walked the bucket and deleted all it
    /// held), so the token goes where a lone token goes, with no lookup, no revision to read and nothing to move.
    package func putStorable<S: StorableEntity>(
        _ entity: S, expectedRevision: UInt64?, continuing removed: UInt64 = 0, entryKey: [UInt8]? = nil, intoEmptyBucket: Bool = false
    ) throws -> UInt64 {
        try entity.validate()
        let entryKey = entryKey ?? S.storageKey(for: entity.key, index: store.keyring.index)
        let lone = intoEmptyBucket && S.kind == .accessToken && expectedRevision == nil
        let key: [UInt8]
        let current: UInt64?
        if lone {
            key = try store.newAccessTokenLocation(entryKey: entryKey, in: writeTransaction, bucketKnownEmpty: true)
            current = nil
        } else {
            key = try writeLocation(S.self, of: entryKey, conditional: expectedRevision != nil)
            current = try currentRevision(S.self, key: key, strict: expectedRevision != nil)
            try check(expectedRevision, against: current, kind: S.kind, key: key)
        }
        // A record this transaction removed under the key continues; one new under it starts above the floor.
        let revision = try max(current ?? (removed > 0 ? removed : revisionFloor()), removed) &+ 1
        try store.seal(entity, key: key, revision: revision, now: now, into: writeTransaction)
        if !lone { try bucketsChanged(S.self, keys: [key]) }
        if S.kind == .accessToken, current == nil { try accessTokenAdded(storageKey: entryKey) }
        return revision
    }

    /// Inserts or replaces `entity`, letting `merge` combine it with the record it replaces, which is read once.
    /// As for an unconditional ``put(_:expectedRevision:)``, a damaged previous record counts as absent (the write
    /// heals it) and the revision grows by one.
    @discardableResult
    func upsert<S: StorableEntity>(_ entity: S, entryKey: [UInt8]? = nil, merging merge: (_ previous: S, _ new: S) -> S) throws -> UInt64 {
        let entryKey = entryKey ?? S.storageKey(for: entity.key, index: store.keyring.index)
        let key = try writeLocation(S.self, of: entryKey, conditional: false)
        let previous = try writeTransaction.withValue(in: KeySpace(S.kind), forKey: key) { value in value.withUnsafeBytes { value in
            store.decode(S.self, value: value, key: key)
        } }
        let merged: S
        let previousRevision: UInt64?
        switch previous {
        case .success(let stored)?:
            merged = merge(stored.entity, entity)
            previousRevision = stored.revision
        case .failure?:  // authenticated but undecodable still has a revision to continue from
            merged = entity
            previousRevision = try currentRevision(S.self, key: key, strict: false)
        case nil:
            merged = entity
            previousRevision = nil
        }
        // Every ingest of a client carries its app metadata, nearly always unchanged: rewriting it would add a seal
        // and a put to each ingest, and make concurrent ingests of one client collide on that one record (on a
        // shared store, a serialisation failure each). Left as it is, it keeps its revision.
        if S.kind == .appMetadata, case .success(let stored)? = previous, stored.entity == merged { return stored.revision }
        try merged.validate()
        let revision = try (previousRevision ?? revisionFloor()) &+ 1
        try store.seal(merged, key: key, revision: revision, now: now, into: writeTransaction)
        try bucketsChanged(S.self, keys: [key])
        if S.kind == .accessToken, previous == nil { try accessTokenAdded(storageKey: entryKey) }
        return revision
    }

    /// What a record written under a key that holds none starts above: 0 in a store of files (it starts at 1), the
    /// store's revision floor on a shared one, so that it also exceeds every revision a deleted record had there and
    /// hosts that read that one do not take the new one for a rollback (``RevisionFloorReading``).
    private func revisionFloor() throws -> UInt64 {
        guard store.revisionMarks != nil else { return 0 }
        guard let floors = writeTransaction as? any RevisionFloorReading else {
            throw TokenCacheError(.internalError, "a write transaction on a shared store cannot read its revision floor")
        }
        return try floors.revisionFloor()
    }

    /// Where a write of the record with storage key `key` goes: where it is stored, else where a new one belongs.
    private func writeLocation<S: StorableEntity>(_ type: S.Type, of key: [UInt8], conditional: Bool) throws -> [UInt8] {
        if let stored = try location(S.self, of: key, damagedMayMatch: conditional) { return stored }
        return try store.newAccessTokenLocation(entryKey: key, in: transaction)  // only an access token is ever absent here
    }

    /// Deletes the records of one kind stored under `keys`; returns how many existed.
    /// - Parameter placing: Puts the tokens left in the changed buckets where FORMAT.md §4.3 says; false only when
    ///   the caller knows the buckets are empty now.
    package func deleteRecords<S: StorableEntity>(_ type: S.Type, keys: [[UInt8]], placing: Bool = true) throws -> Int {
        let database = KeySpace(S.kind)
        var deleted: [[UInt8]] = []
        for key in keys where try writeTransaction.delete(in: database, key: key) { deleted.append(key) }
        if placing { try bucketsChanged(S.self, keys: deleted) }
        return deleted.count
    }

    /// After a write to access-token `keys`, puts the tokens of their buckets where FORMAT.md §4.3 says (a lone token
    /// under its bucket prefix), before anything reads the buckets again.
    private func bucketsChanged<S: StorableEntity>(_ type: S.Type, keys: [[UInt8]]) throws {
        guard S.kind == .accessToken, store.mayHoldLoneTokens else { return }
        var placed: Set<[UInt8]> = []
        for key in keys {
            let prefix = Array(key.prefix(RecordStore.bucketPrefixCount))
            if placed.insert(prefix).inserted { try store.placeTokens(ofBucket: prefix, in: writeTransaction) }
        }
    }

    /// Removes the entity stored under `key`.
    /// - Parameter expectedRevision: as for ``put(_:expectedRevision:)``.
    /// - Returns: Whether a record was removed.
    @discardableResult
    public func delete<Key: CacheEntityKey>(_ key: Key, expectedRevision: UInt64? = nil) throws -> Bool {
        let storable = Key.Entity.storableType
        return try mappingErrors { try deleteStorable(storable, key, expectedRevision: expectedRevision) }
    }

    private func deleteStorable<S: StorableEntity, Key: CacheEntityKey>(_ type: S.Type, _ key: Key, expectedRevision: UInt64?) throws -> Bool {
        let entryKey = S.storageKey(for: key as! S.Key, index: store.keyring.index)
        let storageKey = try location(S.self, of: entryKey, damagedMayMatch: expectedRevision != nil) ?? entryKey
        if expectedRevision != nil {
            let current = try currentRevision(S.self, key: storageKey, strict: true)
            try check(expectedRevision, against: current, kind: S.kind, key: storageKey)
        }
        return try deleteRecords(S.self, keys: [storageKey]) == 1
    }

    /// The stored revision under `key`, nil if absent. A damaged record counts as absent for an
    /// unconditional write (which heals it) and as a conflict for a conditional one.
    private func currentRevision<S: StorableEntity>(_ type: S.Type, key: [UInt8], strict: Bool) throws -> UInt64? {
        let database = KeySpace(S.kind)
        let result = try writeTransaction.withValue(in: database, forKey: key) { value in value.withUnsafeBytes { value in
            Result { () throws(FormatError) in try store.openRevision(value, in: database, key: key) }
        } }
        switch result {
        case nil: return nil
        case .success(let revision)?: return revision
        case .failure(let error)?:
            guard strict else { return nil }
            let corrupt = store.corrupt(S.kind, database, key, error.message)
            throw TokenCacheError(
                .conflict, "cannot compare revisions: \(corrupt)", recordFingerprint: corrupt.fingerprint, currentRevision: nil
            )
        }
    }

    private func check(_ expected: UInt64?, against current: UInt64?, kind: EntityKind, key: [UInt8]) throws(TokenCacheError) {
        guard let expected, expected != (current ?? 0) else { return }
        let fingerprint = store.keyring.fingerprint(database: KeySpace(kind).name, key: key)
        throw TokenCacheError(
            .conflict,
            "\(kind) record \(fingerprint) has revision \(current.map(String.init) ?? "none (absent)"), expected \(expected)",
            recordFingerprint: fingerprint, currentRevision: current
        )
    }
}

extension CacheReader {
    /// Runs `body`, mapping whatever it throws with ``TokenCacheError/wrap(_:directory:)``: the public methods of
    /// ``CacheReader`` and ``CacheWriter`` run through it, so that a caller that catches inside its transaction
    /// closure sees ``TokenCacheError`` too, not only one that catches outside it.
    package func mappingErrors<R>(_ body: () throws -> R) throws(TokenCacheError) -> R {
        do { return try body() } catch { throw TokenCacheError.wrap(error, directory: store.directory) }
    }
}
