public import TokenCache
/// Where an MSAL serialized cache is read from.
public enum MSALCacheSource: Sendable {
    /// A file. It is read twice, in chunks (checked whole first, then written), so memory stays bounded by its
    /// largest entry, whatever its size.
    case file(path: String)
    /// The document's bytes, held by the caller (what standard input becomes: a pipe cannot be read twice).
    case bytes([UInt8])
}

/// How ``TokenStore/importMSAL(from:options:progress:)`` combines a file with what the store holds.
public struct MSALImportOptions: Sendable, Hashable {
    /// What happens to what the store already holds.
    public enum Mode: Sendable, Hashable {
        /// Entry by entry with the store's records of the same identity: the one written later wins (see
        /// ``TokenStore/importMSAL(from:options:progress:)``). Written in transactions of ``batchSize`` entries.
        case merge
        /// The store's five kinds of record and its kept sections are replaced by the file's, in one transaction:
        /// other processes see the whole old cache or the whole new one.
        case replace
    }

    /// ``Mode/merge`` (the default) or ``Mode/replace``.
    public var mode: Mode
    /// Import the valid entries and report the others in ``MSALImportReport/rejected``, instead of importing
    /// nothing when one entry is invalid. A file that is not JSON is refused either way.
    public var skipInvalid: Bool
    /// Entries per write transaction when merging (each commit is durable).
    public var batchSize: Int

    /// The most entries one write transaction of an import applies: a merge's ``batchSize`` at most, a replacing
    /// import's whole file at most. It keeps the writer lock, which every other writer of the store waits for
    /// (``Configuration/lockTimeout``), held for well under a second per transaction.
    public static let maximumEntriesPerTransaction = 10_000
    /// The most entries a replacing import takes: it writes the whole file in one transaction.
    public static var maximumReplaceEntries: Int { maximumEntriesPerTransaction }
    /// The most entity entries an import takes from one file (1,000,000): a larger file is refused before
    /// anything is written. MSAL caches hold hundreds to thousands.
    public static let maximumEntries = 1_000_000

    /// Merging, all or nothing, in transactions of 1,000 entries.
    public init(mode: Mode = .merge, skipInvalid: Bool = false, batchSize: Int = 1_000) {
        self.mode = mode
        self.skipInvalid = skipInvalid
        self.batchSize = batchSize
    }
}

/// How far an import is: reported after every committed batch (and when the check of the file ends).
public struct MSALImportProgress: Sendable, Hashable {
    /// Entries written or judged so far (entity entries only).
    public var entriesDone: Int
    /// Entity entries in the file, invalid ones included.
    public var entriesTotal: Int
}

/// An entry an import skipped (``MSALImportOptions/skipInvalid``): where it was and why, never its content.
public struct MSALRejectedEntry: Sendable, Hashable {
    /// The section as written, escaped for display.
    public var section: String
    /// A keyed fingerprint of the section and entry key (16 hex digits): stable for one store, meaningless
    /// without its keys. The entry key itself is not shown: it is made of account identifiers.
    public var fingerprint: String
    /// Byte offset of the entry's value in the file.
    public var offset: Int
    /// The MSAL field that failed, by its canonical name; nil when the entry as a whole is wrong.
    public var field: String?
    /// A fixed phrase: why.
    public var reason: String
}

/// What an import did.
public struct MSALImportReport: Sendable, Hashable {
    /// Entity entries in the file (valid or not).
    public var entries = 0
    /// Entities written, by kind: new identities, and identities whose stored record was older.
    public var written: [EntityKind: Int] = [:]
    /// Entries not written because the store held the same identity written as late or later, by kind.
    public var keptExisting: [EntityKind: Int] = [:]
    /// Entries whose identity an earlier entry of the same file holds, by kind: they were merged into that one
    /// record by the import rule (the later written, or on a tie the earlier entry), whichever one it kept. MSAL
    /// Python keeps a refresh token per scope set, the store one per account and client or family, so a file of
    /// MSAL Python has such entries; the store held none of their records before.
    public var mergedInFile: [EntityKind: Int] = [:]
    /// Stored access tokens removed because an imported one of the same bucket, written later, covers
    /// intersecting scopes (the rule an ingest applies).
    public var accessTokensSuperseded = 0
    /// Records removed before writing, in ``MSALImportOptions/Mode/replace``.
    public var removedByReplace = 0
    /// Names of the unknown top-level sections kept for export.
    public var keptSections: [String] = []
    /// Entries skipped as invalid (``MSALImportOptions/skipInvalid``).
    public var rejected: [MSALRejectedEntry] = []

    /// The work of meeting the stored access tokens (merging only), for tests.
    var work = MSALImportWork()

    /// Entities written, all kinds.
    public var writtenCount: Int { written.values.reduce(0, +) }
}
