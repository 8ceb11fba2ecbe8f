#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing a whole new data file (a backup, a compacted store) so that it is either absent or complete: it is written
/// under a temporary name in its final directory, synced, and only then given its final name, after which the
/// directory is synced so that the name survives a power loss.
///
/// These open data files, unlike the rest of ``FileSystem``: only new ones, which no environment has open, so no
/// `fcntl` lock of LMDB's can be dropped by closing them.
extension FileSystem {
    /// Creates `path`, which must not exist (`O_EXCL`, never through a symlink), write-only and close-on-exec, with
    /// mode exactly 0600 whatever the umask.
    static func createExclusively(_ path: String) throws(LMDBError) -> Int32 {
        var fd: Int32
        repeat {
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw LMDBError(code: errno) }
        do {
            try setOwnerOnlyMode(fd: fd)
        } catch {
            close(fd)
            unlink(path)
            throw error
        }
        return fd
    }

    /// Empties a file being written and rewinds to its start, to write it again from scratch.
    static func restart(fd: Int32) throws(LMDBError) {
        guard ftruncate(fd, 0) == 0, lseek(fd, 0, SEEK_SET) == 0 else { throw LMDBError(code: errno) }
    }

    /// `fsync`: the file's data and size are on disk when it returns.
    static func sync(fd: Int32) throws(LMDBError) {
        var rc: Int32
        repeat { rc = fsync(fd) } while rc != 0 && errno == EINTR
        guard rc == 0 else { throw LMDBError(code: errno) }
    }

    /// Syncs the directory at `path`, so that names created, renamed or removed in it are on disk.
    static func syncDirectory(_ path: String) throws(LMDBError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw LMDBError(code: errno) }
        defer { close(fd) }
        try sync(fd: fd)
    }

    /// Gives the complete file `temporary` the name `final` in the same directory, failing with `EEXIST` rather than
    /// replace a file of that name (a hard link, then the temporary name removed), and syncs the directory.
    static func publish(_ temporary: String, as final: String, inDirectory directory: String) throws(LMDBError) {
        guard link(temporary, final) == 0 else { throw LMDBError(code: errno) }
        unlink(temporary)
        try syncDirectory(directory)
    }

    /// Puts the complete file `temporary` in place of `final` in one step (`rename`: any process that opens `final`
    /// finds either the old file or the new one, never neither), and syncs the directory.
    static func replace(_ final: String, with temporary: String, inDirectory directory: String) throws(LMDBError) {
        guard rename(temporary, final) == 0 else { throw LMDBError(code: errno) }
        try syncDirectory(directory)
    }

    /// Removes `path` if it exists.
    static func removeIfPresent(_ path: String) throws(LMDBError) {
        guard unlink(path) == 0 || errno == ENOENT else { throw LMDBError(code: errno) }
    }
}
