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

extension CacheReader {
    /// The content an export writes: the records of `options`, from this snapshot.
    func msalExportContent(_ options: MSALExportOptions) throws -> (MSALCacheContent, [CorruptRecord]) {
        let snapshot = try snapshot(filter: options.filter)
        let aliases = store.aliases
        func inCloud(_ environment: String) -> Bool {
            options.environment.map { aliases.areAliases($0, environment) } ?? true
        }
        var content = MSALCacheContent()
        content.accessTokens = snapshot.accessTokens.map(\.entity).filter { inCloud($0.environment) }
        content.refreshTokens = snapshot.refreshTokens.map(\.entity).filter { inCloud($0.environment) }
        content.idTokens = snapshot.idTokens.map(\.entity).filter { inCloud($0.environment) }
        content.accounts = snapshot.accounts.map(\.entity).filter { inCloud($0.environment) }
        content.appMetadata = snapshot.appMetadata.map(\.entity).filter { inCloud($0.environment) }
        if options.isWholeCache { content.unknownSections = try store.foreignSections(in: transaction) }
        return (content, snapshot.corrupt)
    }
}

extension MSALExportReport {
    init(_ content: MSALCacheContent, corrupt: [CorruptRecord], includesSecrets: Bool) {
        written = [
            .accessToken: content.accessTokens.count, .refreshToken: content.refreshTokens.count, .idToken: content.idTokens.count,
            .account: content.accounts.count, .appMetadata: content.appMetadata.count,
        ]
        sections = content.unknownSections.count
        self.corrupt = corrupt
        self.includesSecrets = includesSecrets
    }
}
