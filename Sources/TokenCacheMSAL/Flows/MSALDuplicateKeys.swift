internal import TokenCache
internal import TokenCacheRecords

/// The entry keys an import has met, per section, to find an entry whose key a later entry of the same section
/// repeats.
///
/// Why: MSAL's readers (Python's `json.loads`, .NET, Node, Go) load a section into a map, where the last entry of
/// a key replaces the earlier ones; no MSAL writer produces such a file. Importing both entries (each judged by
/// its own fields) would store a credential that MSAL itself never sees, and taking the first would contradict
/// MSAL. An import therefore refuses such a file, and with ``MSALImportOptions/skipInvalid`` rejects the earlier
/// entries and imports the last, which is what MSAL reads.
///
/// Keys are remembered as keyed 128-bit digests of the exact section name and key (JSON member names compare
/// exactly, case included): memory grows by a few dozen bytes per entry, bounded by
/// ``MSALImportOptions/maximumEntries``, and no identifier stays readable in it.
struct MSALDuplicateKeys {
    private struct Digest: Hashable {
        let high: UInt64
        let low: UInt64
    }

    private let index: BlindIndex
    private var offsets: [Digest: Int] = [:]

    init(index: BlindIndex) {
        self.index = index
    }

    /// Records `entry`'s key; returns the byte offset of the earlier entry of its section with the same key, if any.
    mutating func earlierEntry(sameKeyAs entry: MSALCacheEntry) -> Int? {
        let section = entry.sectionName, key = entry.key ?? ""
        let bytes = index.digest("msal-import-entry-key", exact: "\(section.utf8.count):" + section + key)
        var high: UInt64 = 0, low: UInt64 = 0
        for byte in bytes.prefix(8) { high = high << 8 | UInt64(byte) }
        for byte in bytes.dropFirst(8).prefix(8) { low = low << 8 | UInt64(byte) }
        return offsets.updateValue(entry.offset, forKey: Digest(high: high, low: low))
    }

    /// The reason given for an earlier entry whose key a later one repeats.
    static let reason = "a later entry of the section has the same key; MSAL reads only the last"
}
