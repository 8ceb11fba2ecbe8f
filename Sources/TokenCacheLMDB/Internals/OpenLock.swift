#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on `open.lock` in the store directory, held from before `mdb_env_open` until it returns,
/// so that no two processes of this library are ever inside `mdb_env_open` on one store at the same time.
///
/// Why it exists. The first process to open an environment that nobody else has open takes LMDB's exclusive
/// `fcntl` lock on `lock.mdb` and re-initialises the shared lock table, setting the table's "last committed
/// transaction id" to 0; only at the end of `mdb_env_open` does it copy the newest meta page's id there and
/// downgrade to a shared lock. If that process is killed in between, the table keeps 0. Processes that were
/// already waiting for the shared lock then proceed without re-initialising it, and their first write
/// transaction trusts the 0: it builds on meta page 0 with transaction id 1 and commits into meta page 1,
/// overwriting the newest commit. An acknowledged write is lost and transaction ids restart from 1.
///
/// Serialising openers closes that window: a process waiting here cannot get as far as LMDB's lock until the
/// interrupted opener has died and released this one, and then it finds no LMDB lock holder, takes LMDB's
/// exclusive lock itself and initialises the table correctly. A `flock` is released by the kernel when its holder
/// dies, whatever the signal.
///
/// Programs that open the environment without this lock (the `mdb_*` command-line tools, other LMDB bindings)
/// are not covered; the write guard in `Environment.write` refuses to commit if the table was left stale anyway.
///
/// `flock`, not `fcntl`: an `fcntl` lock belongs to the whole process and is dropped when any descriptor of the
/// file is closed anywhere in it (lmdb.h's warning about `close()`); a `flock` belongs to this open file
/// description alone and ends exactly when `deinit` closes it, or when the process dies.
struct OpenLock: ~Copyable {
    static let fileName = StoreFileName.openLock

    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Creates `open.lock` (mode 0600) if it is missing and waits for the exclusive lock on it, at most `timeout`
    /// (``BoundedFlock``: then ``LMDBError/lockTimeout`` names the holder, an opener stopped inside `mdb_env_open` or
    /// a compaction).
    ///
    /// Returns nil, without locking, only for a read-only open on a read-only filesystem, where no process can
    /// write and LMDB itself runs without a lock table.
    static func acquire(directory: String, readOnly: Bool, timeout: Duration) throws(LMDBError) -> OpenLock? {
        let fd: Int32
        do {
            fd = try FileSystem.openCreatingOwnerOnly(directory + "/" + fileName)
        } catch .readOnlyFilesystem where readOnly {
            return nil
        }
        let lock = OpenLock(descriptor: fd)
        // The directory is private; the lock file gets the same exact mode as LMDB's files, whatever the umask.
        if !readOnly { try FileSystem.setOwnerOnlyMode(fd: fd) }
        try BoundedFlock.lock(fd, what: "the store's open lock", timeout: timeout)
        return lock
    }

    deinit {
        close(descriptor)  // releases the flock
    }
}
