/// The key type of a ``CacheEntity``; lets `get` and `delete` infer the entity from the key alone.
public protocol CacheEntityKey: Sendable, Hashable {
    associatedtype Entity: CacheEntity where Entity.Key == Self
}

extension Account.Key: CacheEntityKey { public typealias Entity = Account }
extension AccessToken.Key: CacheEntityKey { public typealias Entity = AccessToken }
extension RefreshToken.Key: CacheEntityKey { public typealias Entity = RefreshToken }
extension IDToken.Key: CacheEntityKey { public typealias Entity = IDToken }
extension AppMetadata.Key: CacheEntityKey { public typealias Entity = AppMetadata }

/// An entity as stored, with its record metadata.
public struct StoredEntity<Entity: CacheEntity>: Sendable, Hashable {
    /// The entity as decoded from the record.
    public var entity: Entity
    /// Starts at 1 and grows by one on every write of the record: the token for compare-and-swap writes.
    public var revision: UInt64
    /// Unix seconds of the last write, by the writer's clock.
    public var updatedAt: Int64
    /// Where the record was read from, and what names it by fingerprint.
    @usableFromInline package let record: RecordFingerprint

    @inlinable
    package init(entity: Entity, revision: UInt64, updatedAt: Int64, record: RecordFingerprint) {
        self.entity = entity
        self.revision = revision
        self.updatedAt = updatedAt
        self.record = record
    }

    /// The record's keyed, non-secret fingerprint (16 hex digits). Computed on demand: most reads never need it.
    public var fingerprint: String { record.value }

    /// Equal when the entity, revision, write time and storage location are equal.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.entity == rhs.entity && lhs.revision == rhs.revision && lhs.updatedAt == rhs.updatedAt
            && lhs.record.key == rhs.record.key
    }

    /// Hashes the entity and the revision.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(entity)
        hasher.combine(revision)
    }
}

/// A record that failed authentication or decoding. It is never returned as an entity.
public struct CorruptRecord: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of record (which database it was in).
    public var kind: EntityKind
    /// The record's keyed, non-secret fingerprint (16 hex digits), as in ``StoredEntity/fingerprint``.
    public var fingerprint: String
    /// Why, without any of the record's content.
    public var reason: String

    /// Kind, fingerprint and reason; no content of the record.
    public var description: String { "\(kind) record \(fingerprint): \(reason)" }

    package init(kind: EntityKind, fingerprint: String, reason: String) {
        self.kind = kind
        self.fingerprint = fingerprint
        self.reason = reason
    }
}

extension [CorruptRecord] {
    /// Each record once, in first-met order: a flow that probes a record by key and then scans its range meets a
    /// damaged one twice.
    package func removingDuplicates() -> [CorruptRecord] {
        var seen: Set<CorruptRecord> = []
        return filter { seen.insert($0).inserted }
    }
}

/// The records of one kind that a listing found, and those it had to skip.
public struct RecordList<Entity: CacheEntity>: Sendable {
    /// The records that matched and could be read.
    public var records: [StoredEntity<Entity>]
    /// Records that could not be read (failed authentication or decoding); skipped.
    public var corrupt: [CorruptRecord]

    package init(records: [StoredEntity<Entity>], corrupt: [CorruptRecord]) {
        self.records = records
        self.corrupt = corrupt
    }
}

/// Restricts a listing to one home account and/or one client.
public struct RecordFilter: Sendable, Hashable {
    /// Matches ASCII-case-insensitively. Answered by an index range scan, not a full scan.
    public var homeAccountID: String?
    /// Matches ASCII-case-insensitively. Answered by decrypting the candidates (by-client listing is not a
    /// hot path; app metadata excepted, which is indexed by client).
    public var clientID: String?

    /// A filter; nil for either field means no restriction on it.
    public init(homeAccountID: String? = nil, clientID: String? = nil) {
        self.homeAccountID = homeAccountID
        self.clientID = clientID
    }

    /// No restriction: every record.
    public static let all = RecordFilter()
}

/// Everything in the store that matches a filter, by kind.
public struct CacheSnapshot: Sendable {
    /// The Account records (tenant profiles).
    public var accounts: [StoredEntity<Account>] = []
    /// The access tokens.
    public var accessTokens: [StoredEntity<AccessToken>] = []
    /// The refresh tokens.
    public var refreshTokens: [StoredEntity<RefreshToken>] = []
    /// The ID tokens.
    public var idTokens: [StoredEntity<IDToken>] = []
    /// The app metadata records.
    public var appMetadata: [StoredEntity<AppMetadata>] = []
    /// Records that could not be read; the rest of the snapshot is complete.
    public var corrupt: [CorruptRecord] = []

    package init() {}
}
