extension SyntheticPopulation {
    /// The size in bytes of ``TokenStore/exportMSAL(options:to:)`` of a store holding this population (whose
    /// records may since have been replaced by ingests of ``tokenResponse(number:)``), computed without holding
    /// the whole cache in memory: the whole-cache export holds every entity at once (about 12 GB at a million access
    /// tokens), this holds one account's.
    ///
    /// How: the export's layout is fixed (FORMAT of `MSALCacheWriter`: five sections, each `{}` when empty or
    /// `{`, its entries each after a 5- or 6-byte separator, `\n  }`), so a document's size is the size of the
    /// empty document, plus 2 for each non-empty section, plus the entries' own bytes (each counted with a 6-byte
    /// separator). Each account's slice (`RecordFilter(homeAccountID:)`) is exported and its entries' bytes kept;
    /// app metadata, in no account's slice, is written on its own. Exact for stores whose every credential has
    /// a home account id, as this population's has; the tests compare it with the whole export.
    public func msalExportByteCount(of cache: TokenStore, includeSecrets: Bool) throws -> Int {
        func size(_ content: MSALCacheContent) throws -> Int {
            var count = 0
            do { try MSALCacheWriter.write(content, revealSecrets: includeSecrets) { count += $0.count } } catch {
                throw TokenCacheError(.invalidArgument, "\(error)")
            }
            return count
        }
        let empty = try size(MSALCacheContent())
        var entryBytes = 0
        var nonEmptyKinds = Set<EntityKind>()
        func add(_ bytes: Int, written: [EntityKind: Int]) {
            let kinds = written.filter { $0.value > 0 }.keys
            nonEmptyKinds.formUnion(kinds)
            entryBytes += bytes - empty - 2 * kinds.count
        }
        for index in 0..<accounts {
            var bytes = 0
            let options = MSALExportOptions(includeSecrets: includeSecrets, filter: RecordFilter(homeAccountID: account(index).homeAccountID))
            let report = try cache.exportMSAL(options: options) { bytes += $0.count }
            add(bytes, written: report.written)
        }
        var metadata = MSALCacheContent()
        metadata.appMetadata = try cache.list(AppMetadata.self).records.map(\.entity)
        add(try size(metadata), written: [.appMetadata: metadata.appMetadata.count])
        return empty + 2 * nonEmptyKinds.count + entryBytes
    }
}
