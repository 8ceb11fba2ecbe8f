import CLMDB
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One open LMDB environment (a directory holding `data.mdb` and `lock.mdb`), shared by every user of
/// that store in this process.
///
/// A `Sendable` final class, not an actor: LMDB readers are lock-free MVCC and an actor would serialise
/// them. Its stored properties are immutable; the little mutable state (the read-transaction pool, the
/// resize gate) protects itself.
///
/// Rules this type enforces (lmdb.h, "Caveats"):
/// * "Do not have open an LMDB database twice in the same process at the same time." `open` returns the
///   live instance for a store that is already open (see `Environment+Registry.swift`).
/// * "Use an MDB_env* in the process which opened it, not after fork()." Transactions begun in another
///   process throw `LMDBError.usedAfterFork`.
/// * `mdb_env_set_mapsize` only "if no transactions are active in this process": see `TransactionGate`.
package final class Environment: Sendable {
    // SAFETY: the MDB_env* is created once in `open` and closed once in `deinit`; `let` keeps it from being
    // reassigned. LMDB allows an environment to be used from any thread of the opening process, and the one
    // operation that is not thread-safe (mdb_env_set_mapsize) runs only under the exclusive gate.
    nonisolated(unsafe) let handle: OpaquePointer

    /// The directory as resolved by `realpath` when the environment was opened.
    package let directory: String
    package let identity: FileIdentity
    /// Stale reader slots (left by crashed processes) cleared by `mdb_reader_check` right after open.
    package let staleReadersCleared: Int

    let options: EnvironmentOptions
    let databases: [String: Database]
    /// Process-unique number; keys per-thread state and tags `Database` handles.
    let serial: UInt64
    let openPID: pid_t
    /// ``ForkGeneration/current`` at open: differs in the child of a fork.
    let openForkGeneration: Int
    let maxKeySize: Int
    let gate = TransactionGate()
    let readPool: ReadTransactionPool
    /// Set if a map resize failed half-way (LMDB unmapped the old map and could not map the new one);
    /// every later transaction then throws `LMDBError.panic` rather than touch a missing map.
    let isBroken = Atomic<Bool>(false)
    /// The end of `data.mdb` up to which disk blocks are known to be allocated (`allocateDiskReserve`): a write whose
    /// reserve lies within it needs no system call.
    let diskAllocatedThrough = Atomic<Int>(0)

    init(
        handle: OpaquePointer,
        directory: String,
        identity: FileIdentity,
        staleReadersCleared: Int,
        options: EnvironmentOptions,
        databases: [String: Database],
        serial: UInt64,
        maxKeySize: Int
    ) {
        self.handle = handle
        self.directory = directory
        self.identity = identity
        self.staleReadersCleared = staleReadersCleared
        self.options = options
        self.databases = databases
        self.serial = serial
        self.openPID = getpid()
        self.openForkGeneration = ForkGeneration.current
        self.maxKeySize = maxKeySize
        self.readPool = ReadTransactionPool(maxReaders: options.maxReaders)
    }

    deinit {
        // After fork() the child must not touch the environment at all: mdb_txn_abort and mdb_env_close
        // would clear reader slots that belong to the parent's PID. The child leaks it instead.
        let sameProcess = getpid() == openPID
        if sameProcess { readPool.drain() }
        Self.closeAndUnregister(handle: sameProcess ? handle : nil, identity: identity, serial: serial)
    }

    /// The handle of one of the databases named at `open`, or nil for any other name.
    package func database(_ name: String) -> Database? {
        databases[name]
    }

    /// Current size of the memory map in bytes.
    package var mapSize: Int {
        withSharedGate { Int(lmdb_env_info(handle).me_mapsize) }
    }

    /// The id of the newest committed write transaction, by any process (`me_last_txnid`, from the newer meta page):
    /// every commit that changes anything raises it. Reads the map, no transaction.
    package var lastTransactionID: Int {
        // The map may be replaced only under the gate held exclusively. A thread inside a transaction holds it shared
        // already; any other takes it for the one read, without the nesting bookkeeping of a transaction (this is on
        // the path of every in-process cache hit).
        let state = ThreadState.current
        if state[environment: serial].gateDepth > 0 { return Int(lmdb_env_info(handle).me_last_txnid) }
        gate.lockShared(stripe: state.stripe)
        defer { gate.unlockShared(stripe: state.stripe) }
        return Int(lmdb_env_info(handle).me_last_txnid)
    }

    package var info: EnvironmentInfo {
        let (envInfo, pageSize) = withSharedGate { (lmdb_env_info(handle), lmdb_env_page_size(handle)) }
        let entries = (try? read { txn in
            try databases.mapValues { try txn.count(in: $0) }
        }) ?? [:]
        return EnvironmentInfo(
            mapSize: Int(envInfo.me_mapsize),
            pageSize: pageSize,
            lastPageNumber: Int(envInfo.me_last_pgno),
            maxReaders: Int(envInfo.me_maxreaders),
            readersInUse: Int(envInfo.me_numreaders),
            entries: entries
        )
    }

    /// `mdb_reader_check`: clears reader slots of processes that died inside a read transaction and
    /// returns how many it cleared. Also run at open and when a read finds the reader table full.
    @discardableResult
    package func checkReaders() -> Int {
        guard getpid() == openPID else { return 0 }
        var dead: Int32 = 0
        return lmdb_reader_check(handle, &dead) == MDB_SUCCESS ? Int(dead) : 0
    }

    /// The `mdb_version()` string of the liblmdb loaded at run time, e.g. "LMDB 0.9.24: (July 24, 2019)".
    package static var libraryVersion: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        return lmdb_version(&major, &minor, &patch)
    }

    /// Whether a liblmdb version is refused: 0.9.26 through 0.9.31 destroy the shared robust mutexes in
    /// `mdb_env_close` when they believe they are the last user, so other processes then get `EINVAL`
    /// (ITS#9278; partially reverted by ITS#10095 in 0.9.32).
    package static func isUnsupportedLibraryVersion(major: Int, minor: Int, patch: Int) -> Bool {
        major == 0 && minor == 9 && (26...31).contains(patch)
    }

    static func checkLibraryVersion() throws(LMDBError) {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        _ = lmdb_version(&major, &minor, &patch)
        if isUnsupportedLibraryVersion(major: Int(major), minor: Int(minor), patch: Int(patch)) {
            throw .unsupportedLibraryVersion
        }
    }
}
