import CLMDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An LMDB return code or an `errno` value, as a value.
///
/// A struct with static members rather than an enum, so new codes never break a caller's `switch`
/// (the `Errno` / GRDB `ResultCode` shape). Wrapper-level conditions that LMDB itself cannot report
/// use positive codes from 1,000,001 up, far above any `errno` and disjoint from LMDB's negative codes.
///
/// `description` is built from `mdb_strerror` and the code only: it never contains key or value bytes,
/// so an error can be logged without leaking token material.
package struct LMDBError: Error, Hashable, Sendable, CustomStringConvertible {
    package let code: Int32
    /// What only the wrapper knows about this failure (who holds a lock), for the message; not part of its identity:
    /// two errors of one code are equal whatever their details.
    package let detail: String?

    package init(code: Int32) {
        self.code = code
        detail = nil
    }

    private init(code: Int32, detail: String) {
        self.code = code
        self.detail = detail
    }

    package static func == (lhs: LMDBError, rhs: LMDBError) -> Bool { lhs.code == rhs.code }
    package func hash(into hasher: inout Hasher) { hasher.combine(code) }

    // MARK: LMDB return codes (lmdb.h, "Return Codes")

    package static let keyExist = LMDBError(code: MDB_KEYEXIST)
    package static let notFound = LMDBError(code: MDB_NOTFOUND)
    package static let pageNotFound = LMDBError(code: MDB_PAGE_NOTFOUND)
    package static let corrupted = LMDBError(code: MDB_CORRUPTED)
    package static let panic = LMDBError(code: MDB_PANIC)
    package static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH)
    package static let invalid = LMDBError(code: MDB_INVALID)
    package static let mapFull = LMDBError(code: MDB_MAP_FULL)
    package static let dbsFull = LMDBError(code: MDB_DBS_FULL)
    package static let readersFull = LMDBError(code: MDB_READERS_FULL)
    package static let tlsFull = LMDBError(code: MDB_TLS_FULL)
    package static let txnFull = LMDBError(code: MDB_TXN_FULL)
    package static let mapResized = LMDBError(code: MDB_MAP_RESIZED)
    package static let incompatible = LMDBError(code: MDB_INCOMPATIBLE)
    package static let badRslot = LMDBError(code: MDB_BAD_RSLOT)
    package static let badTxn = LMDBError(code: MDB_BAD_TXN)
    package static let badValSize = LMDBError(code: MDB_BAD_VALSIZE)
    package static let badDbi = LMDBError(code: MDB_BAD_DBI)

    // MARK: errno values LMDB passes through

    package static let ioError = LMDBError(code: EIO)
    package static let noSpace = LMDBError(code: ENOSPC)
    package static let accessDenied = LMDBError(code: EACCES)
    package static let readOnlyFilesystem = LMDBError(code: EROFS)
    package static let invalidArgument = LMDBError(code: EINVAL)
    package static let noSuchFile = LMDBError(code: ENOENT)
    package static let busy = LMDBError(code: EBUSY)
    package static let outOfMemory = LMDBError(code: ENOMEM)

    // MARK: Wrapper-level conditions

    /// An `Environment` was used in a process other than the one that opened it.
    /// lmdb.h: "Use an MDB_env* in the process which opened it, not after fork()."
    package static let usedAfterFork = LMDBError(code: 1_000_001)
    /// A write transaction was begun on a thread that is already inside one on the same environment.
    /// LMDB's writer mutex is not recursive, so this would deadlock.
    package static let nestedWrite = LMDBError(code: 1_000_002)
    /// `data.mdb` is shorter than `(last_pgno + 1) * pagesize`; mapping it would raise SIGBUS on access.
    package static let truncatedDataFile = LMDBError(code: 1_000_003)
    /// liblmdb 0.9.26 through 0.9.31 destroy shared robust mutexes on close (ITS#9278, reverted in 0.9.32).
    package static let unsupportedLibraryVersion = LMDBError(code: 1_000_004)
    /// A write transaction would not build on the newest commit: LMDB's lock table records an older last
    /// transaction than the newest meta page (an opener was killed while initialising the table, or a program
    /// opened the store without this library's open lock). Committing would overwrite the newest meta page, so
    /// the transaction was aborted. It clears when every process has closed the store.
    package static let staleLockTable = LMDBError(code: 1_000_005)
    /// A lock of the store directory that this library takes before LMDB's own (the open lock around
    /// `mdb_env_open`, the writer lock around a write transaction) stayed held by another process past the bound
    /// of the wait; ``detail`` names that process. Nothing was done.
    package static let lockTimeout = LMDBError(code: 1_000_006)

    /// ``lockTimeout``, saying who holds the lock.
    static func lockTimeout(detail: String) -> LMDBError { LMDBError(code: lockTimeout.code, detail: detail) }

    package var description: String {
        switch self {
        case .usedAfterFork:
            return "LMDB environment used after fork() in a process other than the one that opened it"
        case .nestedWrite:
            return "write transaction begun inside another write transaction on the same thread (would deadlock)"
        case .truncatedDataFile:
            return "LMDB data file is shorter than its last page; the store is truncated"
        case .staleLockTable:
            return "LMDB's lock table lags the newest commit; the write was refused so as not to overwrite it"
        case .lockTimeout:
            return detail ?? "a lock of the store stayed held by another process past the bound of the wait"
        case .unsupportedLibraryVersion:
            return "liblmdb \(Environment.libraryVersion) is unsupported (0.9.26 through 0.9.31 destroy shared mutexes on close)"
        default:
            // mdb_strerror returns a static string for LMDB codes and strerror() text for errno values.
            return "\(String(cString: lmdb_strerror(code))) (code \(code))"
        }
    }

    /// Lets `catch LMDBError.mapFull` and `case LMDBError.notFound` match an untyped error.
    package static func ~= (pattern: LMDBError, value: any Error) -> Bool {
        (value as? LMDBError) == pattern
    }

    /// Converts an LMDB return code into a thrown error.
    @inline(__always)
    static func check(_ rc: Int32) throws(LMDBError) {
        if rc != MDB_SUCCESS { throw LMDBError(code: rc) }
    }
}
