public import TokenCache
internal import TokenCacheStorage
internal import TokenCacheRecords

/// Which records ``TokenStore/exportMSAL(options:to:)`` writes, and whether with their secrets.
public struct MSALExportOptions: Sendable, Hashable {
    /// Write every token as it is. Without it every `secret` is ``Secret/redactionMarker``, and the file can be
    /// shown or shared but not used to sign in.
    public var includeSecrets: Bool
    /// Only the records of this home account and/or this client (``RecordFilter``).
    public var filter: RecordFilter
    /// Only the records of this authority host's cloud (its alias group, as the store's lookups see it).
    public var environment: String?

    /// Every record, secrets redacted.
    public init(includeSecrets: Bool = false, filter: RecordFilter = .all, environment: String? = nil) {
        self.includeSecrets = includeSecrets
        self.filter = filter
        self.environment = environment
    }

    /// Whether the export is of the whole cache (the kept unknown sections go only into one).
    var isWholeCache: Bool { filter == .all && environment == nil }
}

/// What an export wrote.
public struct MSALExportReport: Sendable, Hashable {
    /// Entities written, by kind.
    public var written: [EntityKind: Int] = [:]
    /// Unknown sections of an imported cache written back (only by an export of the whole cache).
    public var sections = 0
    /// Records that could not be read and were left out (see ``CorruptRecord``).
    public var corrupt: [CorruptRecord] = []
    /// Whether the secrets were written (otherwise each is ``Secret/redactionMarker``).
    public var includesSecrets = false

    /// Entities written, all kinds.
    public var writtenCount: Int { written.values.reduce(0, +) }
}

/// The store as an ``MSALExportSource``, inside one read transaction: the keys of the records that `options` selects,
/// then each record again, decoded once more, when the writer reaches it. Memory holds the keys, never every
/// token at once.
final class StoreExportSource: MSALExportSource {
    let reader: CacheReader
    let options: MSALExportOptions
    private(set) var report: MSALExportReport

    init(_ reader: CacheReader, options: MSALExportOptions) {
        self.reader = reader
        self.options = options
        report = MSALExportReport()
        report.includesSecrets = options.includeSecrets
    }

    func keptSections() throws -> [String: JSONValue] {
        guard options.isWholeCache else { return [:] }
        let sections = try reader.store.foreignSections(in: reader.transaction)
        report.sections = sections.count
        return sections
    }

    func keys(of kind: EntityKind) throws -> [MSALExportKey<[UInt8]>] {
        switch kind {
        case .accessToken: try keys(AccessToken.self, MSALEntity.accessToken)
        case .refreshToken: try keys(RefreshToken.self, MSALEntity.refreshToken)
        case .idToken: try keys(IDToken.self, MSALEntity.idToken)
        case .account: try keys(Account.self, MSALEntity.account)
        case .appMetadata: try keys(AppMetadata.self, MSALEntity.appMetadata)
        }
    }

    private func keys<S: StorableEntity>(_ type: S.Type, _ wrap: (S) -> MSALEntity) throws -> [MSALExportKey<[UInt8]>] {
        var keys: [MSALExportKey<[UInt8]>] = []
        let aliases = reader.store.aliases
        try reader.forEachStored(S.self, filter: options.filter) { stored in
            switch stored {
            case .success(let stored):
                let entity = wrap(stored.entity)
                if let environment = options.environment, !aliases.areAliases(environment, entity.environment) { return }
                keys.append(MSALExportKey(entity, handle: stored.record.key))
            case .failure(let corrupt):
                report.corrupt.append(corrupt)
            }
        }
        report.written[S.kind] = keys.count
        return keys
    }

    func entity(_ key: [UInt8], of kind: EntityKind) throws -> MSALEntity {
        switch kind {
        case .accessToken: try entity(AccessToken.self, key, MSALEntity.accessToken)
        case .refreshToken: try entity(RefreshToken.self, key, MSALEntity.refreshToken)
        case .idToken: try entity(IDToken.self, key, MSALEntity.idToken)
        case .account: try entity(Account.self, key, MSALEntity.account)
        case .appMetadata: try entity(AppMetadata.self, key, MSALEntity.appMetadata)
        }
    }

    /// The record under `key` (its storage location, read in this same snapshot), decoded again.
    private func entity<S: StorableEntity>(_ type: S.Type, _ key: [UInt8], _ wrap: (S) -> MSALEntity) throws -> MSALEntity {
        let store = reader.store
        let decoded: Result<StoredEntity<S>, CorruptRecord>? = try reader.transaction.withValue(
            in: KeySpace(S.kind), forKey: key
        ) { value in value.withUnsafeBytes { value in store.decode(S.self, value: value, key: key) } }
        switch decoded {
        case .success(let stored)?: return wrap(stored.entity)
        case .failure(let corrupt)?: throw TokenCacheError(.corruptRecord, corrupt.description, recordFingerprint: corrupt.fingerprint)
        case nil: throw TokenCacheError(.internalError, "a record listed for export is gone from its own snapshot")
        }
    }
}

extension MSALEntity {
    /// The authority host of the wrapped entity.
    var environment: String {
        switch self {
        case .accessToken(let token): token.environment
        case .refreshToken(let token): token.environment
        case .idToken(let token): token.environment
        case .account(let account): account.environment
        case .appMetadata(let metadata): metadata.environment
        }
    }
}
