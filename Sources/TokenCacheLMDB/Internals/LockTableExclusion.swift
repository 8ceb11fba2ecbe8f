#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// LMDB's own exclusive lock on a store's `lock.mdb`, an `fcntl` write lock on its first byte, held by compaction.
///
/// Every process that has an LMDB environment open holds a shared `fcntl` lock on that byte for as long as it has it
/// open (LMDB takes it in `mdb_env_open`, exclusive while it initialises the lock table, then shared). So getting the
/// exclusive lock proves that no process has the store open, and holding it keeps every LMDB opener out, this
/// library's and any other: `mdb_env_open` waits for the shared lock until this one is released.
///
/// An `fcntl` lock belongs to the process, not the descriptor, and every lock of the process on the file is dropped
/// when any descriptor of it is closed: the caller must not have an environment of this store open in this process
/// (its lock would not conflict with this one, and closing either descriptor would drop both).
struct LockTableExclusion: ~Copyable {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// Takes the lock without waiting (creating `path`, mode 0600, if it is missing).
    /// - Throws: ``StoreInUse`` naming the process that holds a conflicting lock; `LMDBError` for other failures.
    static func acquire(path: String) throws -> LockTableExclusion {
        let fd = try FileSystem.openCreatingOwnerOnly(path)
        var lock = Self.firstByte(F_WRLCK)
        var rc: Int32
        repeat {
            rc = fcntl(fd, F_SETLK, &lock)
        } while rc != 0 && errno == EINTR
        if rc == 0 { return LockTableExclusion(descriptor: fd) }
        let code = errno
        defer { close(fd) }
        guard code == EAGAIN || code == EACCES else { throw LMDBError(code: code) }
        var probe = Self.firstByte(F_WRLCK)
        let holder: pid_t? = fcntl(fd, F_GETLK, &probe) == 0 && probe.l_type != F_UNLCK ? probe.l_pid : nil
        throw StoreInUse(pid: holder.map(Int.init), command: holder.flatMap(Self.commandLine(of:)))
    }

    deinit {
        close(descriptor)  // releases the lock
    }

    private static func firstByte(_ type: Int32) -> flock {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = 0
        lock.l_len = 1
        return lock
    }

    /// The command line of process `pid` from `/proc/<pid>/cmdline`, arguments joined by spaces and cut at 200
    /// characters; nil where `/proc` does not say.
    static func commandLine(of pid: pid_t) -> String? {
        let fd = open("/proc/\(pid)/cmdline", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0 else { return nil }
        let arguments = buffer[..<count].split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        let line = arguments.joined(separator: " ")
        return line.count > 200 ? String(line.prefix(200)) + "…" : line
    }
}

/// Another process (or this one) has the store open, so it cannot be used exclusively now.
package struct StoreInUse: Error, Sendable {
    /// The process holding the store open, where the lock says.
    package let pid: Int?
    /// Its command line, for a message that says which program to stop.
    package let command: String?
    /// Whether the user is this process itself (an environment of the store is open here).
    package let isThisProcess: Bool

    package init(pid: Int?, command: String?, isThisProcess: Bool = false) {
        self.pid = pid
        self.command = command
        self.isThisProcess = isThisProcess
    }
}
