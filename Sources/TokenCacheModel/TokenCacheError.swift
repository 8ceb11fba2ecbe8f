// Public: the type conforms to Foundation's `LocalizedError`, so that `localizedDescription` says what happened.
public import Foundation

/// The one error type the library throws.
///
/// Every public entry point maps what its layers below throw (LMDB, libsodium and format-decoding failures) to
/// this type (the library's `TokenCacheError.wrap(_:directory:)`); only an error that a caller's own closure throws inside
/// the store's `read` or `write` transaction comes back unchanged, so that the caller can catch it.
///
/// A struct with an extensible ``Code`` rather than an enum, so that codes can be added without breaking
/// callers' exhaustive `switch` statements. Messages name what was wrong (a path, a field, a record's
/// fingerprint) and never contain token material, key bytes, storage-key bytes, usernames or account ids.
public struct TokenCacheError: Error, Sendable, CustomStringConvertible, LocalizedError {
    /// What kind of failure this is. Compare with the static members: `error.code == .wrongKey`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, e.g. `wrongKey`.
        public let name: String
        package init(_ name: String) { self.name = name }
        /// The code's ``name``.
        public var description: String { name }

        /// No store exists at the configured directory.
        public static let storeNotFound = Code("storeNotFound")
        /// `create` was asked for a store that already exists.
        public static let storeAlreadyExists = Code("storeAlreadyExists")
        /// One record failed authentication or decoding. It is never returned; the rest of the store works.
        public static let corruptRecord = Code("corruptRecord")
        /// The LMDB environment or the store header is damaged (truncated, garbage, missing header).
        public static let corruptStore = Code("corruptStore")
        /// The key material does not open this store. Nothing was read or written.
        public static let wrongKey = Code("wrongKey")
        /// The key could not be obtained: key file missing, malformed, wrong size; bad passphrase parameters.
        public static let keyUnavailable = Code("keyUnavailable")
        /// A key file, store directory or store file has permissions or ownership that expose it.
        public static let insecurePermissions = Code("insecurePermissions")
        /// The store cannot be used safely here: network filesystem, use after fork, unsafe LMDB version, nested write,
        /// or a cipher the store is sealed with that this processor cannot run (AES-256-GCM without AES-NI).
        public static let unsupportedEnvironment = Code("unsupportedEnvironment")
        /// The store was written by a newer format version that this library cannot read (or write).
        public static let unsupportedFormatVersion = Code("unsupportedFormatVersion")
        /// A write was attempted on a store opened read-only.
        public static let readOnly = Code("readOnly")
        /// The store reached its configured maximum size, or the disk is full. Earlier data is intact.
        public static let storageFull = Code("storageFull")
        /// A write was refused because LMDB's shared lock table lags the store's newest commit (a process was killed
        /// while opening the store, or a program opened it without this library's open lock); committing would have
        /// overwritten that commit. Nothing was written and nothing was lost. It clears once every process using
        /// the store has closed it; retry then.
        public static let staleLockTable = Code("staleLockTable")
        /// The operation needs the store to itself (compaction), and a process has it open: another process, named in the
        /// message, or this one. Nothing was changed; retry once that process has closed the store. Also: a salvage's
        /// directory that another salvage, named by pid, is writing.
        public static let storeInUse = Code("storeInUse")
        /// Another process kept a lock of the store past the bound of the wait (``Configuration/lockTimeout``): its
        /// writer lock (a writer stopped inside its transaction), or its open lock (a compaction, or an opener stopped
        /// inside the open). The message names that process and its program. Nothing was changed; retry.
        public static let lockTimeout = Code("lockTimeout")
        /// A store on a database server could not be reached, or did not answer within its deadline
        /// (`TOKEN_CACHE_STORE_TIMEOUT`, 2 s by default). The message names the server, never a password. A write
        /// that met it may or may not have committed, as with any lost connection; the store is never half-written.
        public static let storeUnavailable = Code("storeUnavailable")
        /// Too many concurrent readers.
        public static let readersExhausted = Code("readersExhausted")
        /// An I/O error from the operating system. The transaction was not committed.
        public static let ioFailure = Code("ioFailure")
        /// A compare-and-swap write lost: the record's revision was not the expected one. Nothing was written.
        public static let conflict = Code("conflict")
        /// An argument was invalid (a malformed scope, an empty required field, an unsupported entity type).
        public static let invalidArgument = Code("invalidArgument")
        /// A record exceeds the per-record size limit of the format.
        public static let recordTooLarge = Code("recordTooLarge")
        /// A failure inside the library that no other code describes: an internal layer reported something the layer
        /// above should have handled (libsodium refusing a length or parameter the library computed, an error of an
        /// unexpected type). A bug, not bad input or damage; a write that met it was not committed.
        public static let internalError = Code("internalError")
    }

    /// What kind of failure this is.
    public let code: Code
    /// A human-readable explanation. Never contains secrets or personal data.
    public let message: String
    /// For ``Code/corruptRecord`` and ``Code/conflict``: the keyed, non-secret fingerprint of the record.
    public let recordFingerprint: String?
    /// For ``Code/conflict``: the revision currently stored (`nil` if the record does not exist).
    public let currentRevision: UInt64?

    package init(_ code: Code, _ message: String, recordFingerprint: String? = nil, currentRevision: UInt64? = nil) {
        self.code = code
        self.message = message
        self.recordFingerprint = recordFingerprint
        self.currentRevision = currentRevision
    }

    /// The code's name and the message, e.g. `wrongKey: …`.
    public var description: String { "\(code.name): \(message)" }

    /// The same redacted text as ``description``: without it, Foundation's `localizedDescription` (what apps log
    /// and show) would only say "The operation could not be completed" and the type's name.
    public var errorDescription: String? { description }
}
