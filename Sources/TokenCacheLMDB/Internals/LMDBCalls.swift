import CLMDB

#if DEBUG
import Synchronization
#endif

// The one seam between Swift and liblmdb (swift-system's `Syscalls.swift` pattern): every `mdb_*` call
// of this module goes through a tiny function here, so tracing and fault injection have a single home.
// Only `MDB_*` types and `OpaquePointer`s appear in these signatures; none of them leaves the module.

@inline(__always) func lmdb_version(_ major: inout Int32, _ minor: inout Int32, _ patch: inout Int32) -> String {
    String(cString: mdb_version(&major, &minor, &patch))
}

@inline(__always) func lmdb_strerror(_ code: Int32) -> UnsafeMutablePointer<CChar> {
    mdb_strerror(code)
}

// MARK: Environment

@inline(__always) func lmdb_env_create(_ env: inout OpaquePointer?) -> Int32 {
    mdb_env_create(&env)
}

@inline(__always) func lmdb_env_close(_ env: OpaquePointer) {
    mdb_env_close(env)
}

@inline(__always) func lmdb_env_set_maxdbs(_ env: OpaquePointer, _ count: UInt32) -> Int32 {
    mdb_env_set_maxdbs(env, count)
}

@inline(__always) func lmdb_env_set_maxreaders(_ env: OpaquePointer, _ count: UInt32) -> Int32 {
    mdb_env_set_maxreaders(env, count)
}

@inline(__always) func lmdb_env_set_mapsize(_ env: OpaquePointer, _ size: Int) -> Int32 {
    mdb_env_set_mapsize(env, size)
}

@inline(__always) func lmdb_env_open(_ env: OpaquePointer, _ path: String, _ flags: UInt32, _ mode: UInt32) -> Int32 {
    mdb_env_open(env, path, flags, mdb_mode_t(mode))
}

@inline(__always) func lmdb_env_get_fd(_ env: OpaquePointer) -> Int32? {
    var fd: mdb_filehandle_t = -1
    return mdb_env_get_fd(env, &fd) == MDB_SUCCESS ? fd : nil
}

@inline(__always) func lmdb_env_info(_ env: OpaquePointer) -> MDB_envinfo {
    var info = MDB_envinfo()
    _ = mdb_env_info(env, &info)  // only fails for a NULL env
    return info
}

@inline(__always) func lmdb_env_page_size(_ env: OpaquePointer) -> Int {
    var stat = MDB_stat()
    _ = mdb_env_stat(env, &stat)  // only fails for a NULL env
    return Int(stat.ms_psize)
}

@inline(__always) func lmdb_env_get_maxkeysize(_ env: OpaquePointer) -> Int {
    Int(mdb_env_get_maxkeysize(env))
}

@inline(__always) func lmdb_reader_list(
    _ env: OpaquePointer, _ function: @convention(c) (UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Int32,
    _ context: UnsafeMutableRawPointer?
) -> Int32 {
    mdb_reader_list(env, function, context)
}

@inline(__always) func lmdb_reader_check(_ env: OpaquePointer, _ dead: inout Int32) -> Int32 {
    mdb_reader_check(env, &dead)
}

// MARK: Transactions

@inline(__always) func lmdb_txn_begin(_ env: OpaquePointer, readOnly: Bool, _ txn: inout OpaquePointer?) -> Int32 {
    #if DEBUG
    if let injected = LMDBFaultInjection.consume(.txnBegin, env: env) { return injected }
    #endif
    return mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &txn)
}

@inline(__always) func lmdb_txn_renew(_ txn: OpaquePointer) -> Int32 {
    #if DEBUG
    if let injected = LMDBFaultInjection.consume(.txnRenew, env: mdb_txn_env(txn)) { return injected }
    #endif
    return mdb_txn_renew(txn)
}

/// lmdb.h: "The transaction handle is freed. It and its cursors must not be used again after this call"
/// (whether or not the commit succeeded).
@inline(__always) func lmdb_txn_commit(_ txn: OpaquePointer) -> Int32 {
    #if DEBUG
    if let injected = LMDBFaultInjection.consume(.commit, env: mdb_txn_env(txn)) {
        mdb_txn_abort(txn)  // a failed mdb_txn_commit frees the handle too
        return injected
    }
    #endif
    return mdb_txn_commit(txn)
}

@inline(__always) func lmdb_txn_abort(_ txn: OpaquePointer) {
    mdb_txn_abort(txn)
}

@inline(__always) func lmdb_txn_reset(_ txn: OpaquePointer) {
    mdb_txn_reset(txn)
}

@inline(__always) func lmdb_txn_id(_ txn: OpaquePointer) -> Int {
    mdb_txn_id(txn)
}

// MARK: Databases and data

@inline(__always) func lmdb_dbi_open(_ txn: OpaquePointer, _ name: String, create: Bool, _ dbi: inout UInt32) -> Int32 {
    mdb_dbi_open(txn, name, create ? UInt32(MDB_CREATE) : 0, &dbi)
}

@inline(__always) func lmdb_stat(_ txn: OpaquePointer, _ dbi: UInt32, _ stat: inout MDB_stat) -> Int32 {
    mdb_stat(txn, dbi, &stat)
}

@inline(__always) func lmdb_get(_ txn: OpaquePointer, _ dbi: UInt32, _ key: inout MDB_val, _ value: inout MDB_val) -> Int32 {
    mdb_get(txn, dbi, &key, &value)
}

@inline(__always) func lmdb_put(
    _ txn: OpaquePointer, _ dbi: UInt32, _ key: inout MDB_val, _ value: inout MDB_val, reserve: Bool
) -> Int32 {
    #if DEBUG
    if let injected = LMDBFaultInjection.consume(.put, env: mdb_txn_env(txn)) { return injected }
    #endif
    return mdb_put(txn, dbi, &key, &value, reserve ? UInt32(MDB_RESERVE) : 0)
}

/// `mdb_put` with `MDB_APPEND`: the key sorts after every key of the database (a copy in key order), so LMDB fills each
/// leaf page before it starts the next instead of splitting pages in half.
@inline(__always) func lmdb_put_appending(_ txn: OpaquePointer, _ dbi: UInt32, _ key: inout MDB_val, _ value: inout MDB_val) -> Int32 {
    mdb_put(txn, dbi, &key, &value, UInt32(MDB_APPEND))
}

@inline(__always) func lmdb_env_sync(_ env: OpaquePointer) -> Int32 {
    mdb_env_sync(env, 1)
}

@inline(__always) func lmdb_del(_ txn: OpaquePointer, _ dbi: UInt32, _ key: inout MDB_val) -> Int32 {
    mdb_del(txn, dbi, &key, nil)
}

@inline(__always) func lmdb_drop(_ txn: OpaquePointer, _ dbi: UInt32) -> Int32 {
    mdb_drop(txn, dbi, 0)
}

// MARK: Cursors

@inline(__always) func lmdb_cursor_open(_ txn: OpaquePointer, _ dbi: UInt32, _ cursor: inout OpaquePointer?) -> Int32 {
    mdb_cursor_open(txn, dbi, &cursor)
}

@inline(__always) func lmdb_cursor_close(_ cursor: OpaquePointer) {
    mdb_cursor_close(cursor)
}

enum CursorStep {
    case first, setRange, next

    var op: MDB_cursor_op {
        switch self {
        case .first: MDB_FIRST
        case .setRange: MDB_SET_RANGE
        case .next: MDB_NEXT
        }
    }
}

@inline(__always) func lmdb_cursor_get(
    _ cursor: OpaquePointer, _ key: inout MDB_val, _ value: inout MDB_val, _ step: CursorStep
) -> Int32 {
    mdb_cursor_get(cursor, &key, &value, step.op)
}

// MARK: Fault injection (debug builds only)

#if DEBUG
/// Makes the seam return an error code instead of calling LMDB, so capacity and I/O failures
/// (`MDB_MAP_RESIZED`, `MDB_READERS_FULL`, `EIO` on commit, ...) are testable without filling a disk.
/// Scoped to one environment, so parallel tests do not interfere. Debug builds only.
package enum LMDBFaultInjection {
    package enum Call: Hashable, Sendable {
        case txnBegin, txnRenew, put, commit
        /// Skips padding `data.mdb` after a commit or at open, as a writer killed between the two would.
        case padDataFile
    }

    private struct Key: Hashable {
        let environment: UInt
        let call: Call
    }

    private struct Fault {
        var code: Int32
        var remaining: Int
    }

    /// Number of armed faults; lets the hot path skip the lock when nothing is armed.
    private static let armedCount = Atomic<Int>(0)
    private static let faults = Mutex<[Key: Fault]>([:])

    /// The next `times` calls of `call` on `environment` fail with `error` without reaching LMDB.
    package static func arm(_ call: Call, on environment: Environment, failingWith error: LMDBError, times: Int = 1) {
        let key = Key(environment: UInt(bitPattern: environment.handle), call: call)
        faults.withLock { faults in
            if faults[key] == nil { armedCount.add(1, ordering: .relaxed) }
            faults[key] = Fault(code: error.code, remaining: times)
        }
    }

    /// Removes every armed fault of `environment`.
    package static func disarm(_ environment: Environment) {
        let handle = UInt(bitPattern: environment.handle)
        faults.withLock { faults in
            for key in faults.keys where key.environment == handle {
                faults[key] = nil
                armedCount.subtract(1, ordering: .relaxed)
            }
        }
    }

    static func consume(_ call: Call, env: OpaquePointer?) -> Int32? {
        guard armedCount.load(ordering: .relaxed) > 0, let env else { return nil }
        let key = Key(environment: UInt(bitPattern: env), call: call)
        return faults.withLock { faults -> Int32? in
            guard var fault = faults[key] else { return nil }
            fault.remaining -= 1
            if fault.remaining <= 0 {
                faults[key] = nil
                armedCount.subtract(1, ordering: .relaxed)
            } else {
                faults[key] = fault
            }
            return fault.code
        }
    }
}
#endif
