public import TokenCache
/// What an MSAL serialized cache holds, counted without importing it and without a store: entries per section,
/// the entries an import would refuse, and the names of the unknown sections. For listing the caches found on a
/// machine before choosing one (`cachetool import --discover`).
///
/// The document is read with the import's streaming reader (memory bounded by one entry, whatever the size), and
/// each entity entry is mapped as an import maps it, so ``invalidEntries`` is exactly what an import without
/// ``MSALImportOptions/skipInvalid`` would refuse. Nothing of an entry is kept but its kind.
public struct MSALCacheSummary: Sendable, Hashable {
    /// Entity entries per section (duplicates of one identity counted each time, as in the file).
    public var entries: [EntityKind: Int] = [:]
    /// Entity entries that do not map to an entity (a missing or mistyped field, …): an import refuses the file
    /// unless it skips them.
    public var invalidEntries = 0
    /// The unknown top-level sections, by name as written (not escaped: escape before display).
    public var unknownSections: [String] = []

    /// Account entries.
    public var accounts: Int { entries[.account] ?? 0 }
    /// Access, refresh and ID token entries.
    public var tokens: Int { (entries[.accessToken] ?? 0) + (entries[.refreshToken] ?? 0) + (entries[.idToken] ?? 0) }
    /// Entity entries of every kind.
    public var entryCount: Int { entries.values.reduce(0, +) }

    /// Reads and counts the whole document.
    /// - Throws: ``TokenCacheError`` `.invalidArgument` for a file that cannot be read or a document that is not
    ///   an MSAL cache (the message locates the fault by byte offset, never by content).
    public init(reading source: MSALCacheSource) throws {
        var reader = try source.makeReader()
        while let entry = try source.next(&reader) {
            guard case .entity(let kind) = entry.section else {
                unknownSections.append(entry.sectionName)
                continue
            }
            entries[kind, default: 0] += 1
            if (try? MSALEntityMapping.entity(from: entry)) == nil { invalidEntries += 1 }
        }
    }
}
