#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on `writer.lock` in the store directory, held by every write transaction of this library
/// from before `mdb_txn_begin` until after its commit or abort.
///
/// LMDB serialises writers with a mutex in `lock.mdb` that a waiter cannot give up on: a writer stopped inside its
/// transaction (Ctrl-Z, `SIGSTOP`, a debugger) would hang every other writer of every process, with no word of who.
/// Taking this lock first, for a bounded time (``BoundedFlock``), turns that into ``LMDBError/lockTimeout`` naming
/// the stopped process; LMDB's mutex is then only ever met free, by writers of this library. A lock taken on a
/// descriptor of its own per transaction, so that two threads of one process exclude each other as two processes do
/// (a `flock` belongs to an open file description). The kernel releases it when its holder dies, whatever the signal.
struct WriterLock {
    static let fileName = StoreFileName.writerLock

    private let descriptor: Int32

    /// Waits at most `timeout` for the writer lock of the store in `directory`, creating its file (mode 0600) the first time.
    static func acquire(directory: String, timeout: Duration) throws(LMDBError) -> WriterLock {
        let path = directory + "/" + fileName
        var fd: Int32
        repeat { fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW) } while fd < 0 && errno == EINTR
        if fd < 0 {
            guard errno == ENOENT else { throw LMDBError(code: errno) }
            fd = try FileSystem.openCreatingOwnerOnly(path)
            do { try FileSystem.setOwnerOnlyMode(fd: fd) } catch {
                close(fd)
                throw error
            }
        }
        do { try BoundedFlock.lock(fd, what: "the store's writer lock", timeout: timeout) } catch {
            close(fd)
            throw error
        }
        return WriterLock(descriptor: fd)
    }

    /// Releases the lock (closing its descriptor releases the `flock`).
    func release() { close(descriptor) }
}
