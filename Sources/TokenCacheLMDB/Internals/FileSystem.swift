#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The few POSIX file calls the wrapper needs. None of them opens the data file: lmdb.h warns that even
/// "a plain open() call - close()ing it breaks fcntl() advisory locking". Everything here works by path
/// (`stat`, `chmod`, `realpath`) or on LMDB's own descriptor from `mdb_env_get_fd`.
enum FileSystem {
    /// `realpath(3)`: resolves symlinks, `.` and `..`.
    static func resolvedPath(_ path: String) throws(LMDBError) -> String {
        guard let resolved = realpath(path, nil) else { throw LMDBError(code: errno) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `(st_dev, st_ino)` of the file at `path`, or nil if it does not exist.
    static func identity(at path: String) -> FileIdentity? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return FileIdentity(status)
    }

    /// `st_size` of the file at `path`, or nil if it cannot be `stat`ed.
    static func size(at path: String) -> Int? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Int(status.st_size)
    }

    /// `fstat` of an open descriptor.
    static func status(of fd: Int32) throws(LMDBError) -> (identity: FileIdentity, size: Int) {
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw LMDBError(code: errno) }
        return (FileIdentity(status), Int(status.st_size))
    }

    static func isDirectory(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    /// Sets the exact mode, independent of the umask that applied at creation.
    static func setOwnerOnlyMode(fd: Int32) throws(LMDBError) {
        guard fchmod(fd, 0o600) == 0 else { throw LMDBError(code: errno) }
    }

    static func setOwnerOnlyMode(path: String) throws(LMDBError) {
        guard chmod(path, 0o600) == 0 else { throw LMDBError(code: errno) }
    }

    /// Grows (never shrinks) LMDB's data file through LMDB's own descriptor, then syncs it.
    /// Callers hold LMDB's writer lock, so no other writer is extending the file at the same time.
    static func extend(fd: Int32, to length: Int) {
        var status = stat()
        guard fstat(fd, &status) == 0, Int(status.st_size) < length else { return }
        if ftruncate(fd, off_t(length)) == 0 {
            #if os(Linux)
            _ = fdatasync(fd)
            #else
            _ = fsync(fd)
            #endif
        }
    }

    /// `open(2)` read-write, creating the file with mode 0600 if missing, never through a symlink, close-on-exec.
    static func openCreatingOwnerOnly(_ path: String) throws(LMDBError) -> Int32 {
        var fd: Int32
        repeat {
            fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        } while fd < 0 && errno == EINTR
        guard fd >= 0 else { throw LMDBError(code: errno) }
        return fd
    }

    /// Allocates the blocks of the first `length` bytes of the file at `path` (creating it, mode 0600), so that
    /// writing them through a memory map cannot fail for lack of space. Throws `ENOSPC` when the filesystem is full;
    /// a filesystem without `fallocate` support is left to the kernel's usual behaviour.
    ///
    /// Opens and closes the file: callers must not have an LMDB environment on this file open in this process
    /// (closing any descriptor of it would drop that environment's `fcntl` locks).
    static func preallocate(path: String, length: Int) throws(LMDBError) {
        let fd = try openCreatingOwnerOnly(path)
        defer { close(fd) }
        var rc: Int32
        repeat {
            rc = posix_fallocate(fd, 0, off_t(length))  // returns the error number; leaves errno alone
        } while rc == EINTR
        guard rc == 0 || rc == EOPNOTSUPP || rc == EINVAL else { throw LMDBError(code: rc) }
    }

    static var osPageSize: Int {
        max(4096, sysconf(Int32(_SC_PAGESIZE)))
    }
}

extension FileIdentity {
    init(_ status: stat) {
        self.init(device: UInt64(truncatingIfNeeded: status.st_dev), inode: UInt64(truncatingIfNeeded: status.st_ino))
    }
}

extension FileSystem {
    /// A file read to its end, for `/proc` files. The kernel hands them out a page at a time and says nothing of their
    /// size (`stat` gives 0): a single read of `/proc/self/maps` returns only the first few dozen mappings, and readers
    /// that stop at the first short read (as `String(contentsOfFile:)` does here) miss the rest, which in a process
    /// with many threads or libraries holds the store's map (`MemoryMapRegion`), or the lock a process holds
    /// (`BoundedFlock`, from `/proc/locks`).
    static func readWholeFile(_ path: String) -> Substring? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return Substring(String(decoding: bytes, as: UTF8.self))
    }
}
