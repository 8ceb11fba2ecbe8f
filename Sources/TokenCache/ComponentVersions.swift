internal import TokenCacheRecords
internal import TokenCacheStorage
internal import TokenCacheSodium

/// What this build of the library is made of, for version output and bug reports: the newest store format it
/// reads and writes (FORMAT.md §7; older formats are read too, and upgraded when opened writable), and the C
/// libraries loaded at run time. No store is opened.
public struct ComponentVersions: Sendable, Hashable {
    /// The newest store format read version this library reads (stores with a higher one are refused).
    public var formatReadVersion: UInt16
    /// The store format write version this library writes (stores with a higher one open read-only).
    public var formatWriteVersion: UInt16
    /// liblmdb's version number, as the loaded library reports it (for example `0.9.24`).
    public var lmdb: String
    /// libsodium's version string, as the loaded library reports it.
    public var sodium: String

    /// The versions of this process's library and the C libraries it loaded.
    public static var current: ComponentVersions {
        ComponentVersions(
            formatReadVersion: FormatConstants.readVersion, formatWriteVersion: FormatConstants.writeVersion,
            lmdb: versionNumber(in: StorageLibraries.lmdb), sodium: Sodium.versionString
        )
    }

    /// The first word that starts with a digit, without trailing punctuation: liblmdb reports
    /// `LMDB 0.9.24: (July 24, 2019)`. The whole text when there is no such word.
    static func versionNumber(in text: String) -> String {
        guard let word = text.split(separator: " ").first(where: { $0.first?.isNumber == true }) else { return text }
        return String(word.reversed().drop(while: { !$0.isNumber }).reversed())
    }
}
