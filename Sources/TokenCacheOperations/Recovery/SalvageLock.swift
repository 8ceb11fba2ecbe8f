internal import TokenCache
#if canImport(Glibc)
import Glibc
#endif

/// A salvage's exclusive hold on its target directory, for as long as it writes there: an `flock` on `salvage.lock`
/// in it, holding the holder's pid.
///
/// Two salvages into one directory would both resume from the same progress file and overwrite each other's
/// position, and a run left behind by a killed parent would go on writing beside the one started again. The second
/// one meets `.storeInUse` naming the first's pid at once: it never waits.
///
/// `flock`, as the store's open lock: the kernel releases it when its holder dies, whatever the signal, and it
/// belongs to one open file description, so a second salvage in the same process conflicts too. The holder removes
/// the file when done; one that locked a file removed meanwhile (opened just before) locks the new one instead.
struct SalvageLock: ~Copyable {
    static let fileName = "salvage.lock"

    private let descriptor: Int32
    private let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Takes the lock without waiting, creating `salvage.lock` (mode 0600) in `directory`, which must exist.
    /// - Throws: ``TokenCacheError`` `.storeInUse` naming the holder's pid when another salvage holds it;
    ///   `.ioFailure` when the lock file cannot be opened or locked.
    static func acquire(directory: String) throws(TokenCacheError) -> SalvageLock {
        let path = directory + "/" + fileName
        // Each round either locks the file the path names, or finds it replaced by a holder that has just finished.
        for _ in 0..<100 {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw TokenCacheError(.ioFailure, "cannot open \(path): \(FileSystem.describe(errno))") }
            var rc: Int32
            repeat {
                rc = flock(fd, LOCK_EX | LOCK_NB)
            } while rc != 0 && errno == EINTR
            guard rc == 0 else {
                let code = errno
                let holder = Self.holder(fd)
                close(fd)
                guard code == EWOULDBLOCK else { throw TokenCacheError(.ioFailure, "cannot lock \(path): \(FileSystem.describe(code))") }
                throw TokenCacheError(
                    .storeInUse,
                    "\(directory) is being written by another salvage (\(holder.map { "pid \($0)" } ?? "a process that has just started")); "
                        + "nothing was written: wait for it to end, or stop it and run the salvage again to continue"
                )
            }
            var opened = stat(), named = stat()
            if fstat(fd, &opened) == 0, stat(path, &named) == 0, opened.st_dev == named.st_dev, opened.st_ino == named.st_ino {
                let pid = Array("\(getpid())\n".utf8)
                guard ftruncate(fd, 0) == 0, pwrite(fd, pid, pid.count, 0) == pid.count else {
                    let code = errno
                    close(fd)
                    throw TokenCacheError(.ioFailure, "cannot write \(path): \(FileSystem.describe(code))")
                }
                return SalvageLock(descriptor: fd, path: path)
            }
            close(fd)
        }
        throw TokenCacheError(.storeInUse, "\(directory): the lock of its salvage keeps being replaced; nothing was written")
    }

    /// The pid written in the lock file, if any yet.
    private static func holder(_ fd: Int32) -> Int? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return Int(String(decoding: buffer[..<count].prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self))
    }

    deinit {
        unlink(path)
        close(descriptor)  // releases the lock
    }
}
