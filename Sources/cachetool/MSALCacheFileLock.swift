import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The lock that msal-extensions' writers of a plaintext MSAL cache take around every read and write of it: an
/// exclusive `flock` on `<cache file>.lockfile` (its `CrossPlatLock`, through portalocker on Linux; Azure CLI and
/// the Azure Identity libraries write their caches this way).
///
/// `cachetool import --shred-source` holds it from before the import reads the file until the file is removed, so
/// that Azure CLI cannot write a new token into the file between the read-back and the zeros: it waits, and then
/// writes a new file. The wait is bounded (``Configuration/lockTimeout``): a holder that never lets go (a process
/// stopped with Ctrl-Z) makes the shredding give up, with the holder named where the lock file says (msal-extensions
/// writes its process id and program name into it), and the file is kept.
///
/// As msal-extensions does, the lock file is created when missing and removed on release if this process created
/// it; one that another holder removed while this process waited is not taken (its lock would guard nothing), the
/// new one is.
struct MSALCacheFileLock {
    let path: String
    private let descriptor: Int32
    private let created: Bool

    /// The lock file of the cache at `cachePath`.
    static func lockFilePath(of cachePath: String) -> String { cachePath + ".lockfile" }

    /// Takes the lock, waiting at most `timeout`.
    static func acquire(for cachePath: String, timeout: Duration) throws(SourceShredding.Refusal) -> MSALCacheFileLock {
        let path = lockFilePath(of: cachePath)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var pause: Duration = .milliseconds(1)
        while true {
            let existed = access(path, F_OK) == 0
            let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw SourceShredding.Refusal("cannot open its lock file \(Terminal.sanitize(path)): \(SourceShredding.errorText())")
            }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                if namesSameFile(path, descriptor) {
                    let note = Array("\(getpid()) cachetool".utf8)
                    _ = ftruncate(descriptor, 0)
                    _ = note.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
                    return MSALCacheFileLock(path: path, descriptor: descriptor, created: !existed)
                }
                // The holder removed the file as it let go: the lock of the next one is on a new file.
                close(descriptor)
                continue
            }
            let code = errno
            close(descriptor)
            guard code == EWOULDBLOCK || code == EINTR else {
                throw SourceShredding.Refusal("cannot lock its lock file \(Terminal.sanitize(path)): \(String(cString: strerror(code)))")
            }
            let now = clock.now
            guard now < deadline else { throw timedOut(path, timeout: timeout) }
            let nap = min(pause, deadline - now)
            Thread.sleep(forTimeInterval: Double(nap.components.seconds) + Double(nap.components.attoseconds) / 1e18)
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    /// Lets go: removes the lock file if this process created it, then unlocks.
    func release() {
        if created, Self.namesSameFile(path, descriptor) { unlink(path) }
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }

    private static func namesSameFile(_ path: String, _ descriptor: Int32) -> Bool {
        var named = stat(), open = stat()
        return stat(path, &named) == 0 && fstat(descriptor, &open) == 0 && named.st_dev == open.st_dev && named.st_ino == open.st_ino
    }

    /// Says who holds the lock, as the holder wrote it into the lock file (`<pid> <program>`), where it did.
    private static func timedOut(_ path: String, timeout: Duration) -> SourceShredding.Refusal {
        var holder = "another process"
        if let handle = FileHandle(forReadingAtPath: path), let data = try? handle.read(upToCount: 256) {
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let parts = text.split(separator: " ", maxSplits: 1)
            if let pid = parts.first.flatMap({ Int32($0) }) {
                holder = "process \(pid)" + (parts.count > 1 ? " (\(Terminal.sanitize(String(parts[1]))))" : "")
            }
        }
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        return SourceShredding.Refusal(
            "its lock file \(Terminal.sanitize(path)) is held by \(holder), which kept it longer than the "
                + "\(seconds.formatted(.number.precision(.fractionLength(0...1)))) s this process waits (TOKEN_CACHE_LOCK_TIMEOUT); "
                + "nothing was imported")
    }
}
