#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Waiting for an exclusive `flock` on a lock file of the store directory, for a bounded time.
///
/// A blocking `flock` waits for as long as the holder keeps the lock, and a holder stopped with Ctrl-Z or `SIGSTOP`
/// keeps it until it is resumed: every other process would hang with no word of why. So the lock is tried without
/// blocking, and tried again after pauses that grow from a millisecond to 4 ms (a holder's usual turn is a
/// transaction's fsync, milliseconds), until `timeout` has passed; then the wait ends with
/// ``LMDBError/lockTimeout`` naming the process that holds the lock now and its program, as the kernel's
/// `/proc/locks` tells them. The holder's identity is looked up only then, so an uncontended lock costs one call.
///
/// Unlike a waiter the kernel queues, a poller has no turn: a process that takes the lock again within microseconds
/// of releasing it, over and over for the whole bound, can keep a poller from it. Writers of this library do work
/// between their transactions (reading, planning, an fsync each), which leaves pollers their openings; the message
/// says the lock stayed taken, not that one holder kept it.
enum BoundedFlock {
    /// Takes the exclusive lock on the open file `descriptor`, waiting at most `timeout`.
    /// - Parameter what: The lock, for the message (`"the store's writer lock"`).
    /// - Throws: ``LMDBError/lockTimeout`` with the holder in its detail; other `LMDBError`s from `flock`.
    static func lock(_ descriptor: Int32, what: String, timeout: Duration) throws(LMDBError) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var pause: Duration = .milliseconds(1)
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
            let code = errno
            guard code == EWOULDBLOCK || code == EINTR else { throw LMDBError(code: code) }
            let now = clock.now
            if now >= deadline {
                // The holder may let go between the last try and the look-up, which then finds nobody: try again, and if
                // another process took the lock meanwhile, look again, so that the error names whoever holds it.
                for _ in 0..<3 {
                    let holder = holderOfFlock(on: descriptor)
                    if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return }
                    if let holder { throw timedOut(holder: holder, what: what, timeout: timeout) }
                }
                throw timedOut(holder: nil, what: what, timeout: timeout)
            }
            let nap = min(pause, deadline - now)
            let (seconds, attoseconds) = nap.components
            var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
            pause = min(pause * 2, .milliseconds(4))
        }
    }

    private static func timedOut(holder: pid_t?, what: String, timeout: Duration) -> LMDBError {
        let who = switch (holder, holder.flatMap(programName(of:))) {
        case let (pid?, program?): "process \(pid) (\(program))"
        case let (pid?, nil): "process \(pid)"
        default: "another process"
        }
        let tenths = timeout.components.seconds * 10 + timeout.components.attoseconds / 100_000_000_000_000_000
        let seconds = tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)"
        return LMDBError.lockTimeout(
            detail: "\(what) stayed taken for the \(seconds) s this process waits; \(who) holds it now "
                + "(a process stopped with Ctrl-Z or SIGSTOP keeps it until it is resumed)"
        )
    }

    /// What names process `pid` in a message: its program and, when it looks like one, its subcommand
    /// (`cachetool compact`), never the rest of its command line, which may carry a secret.
    static func programName(of pid: pid_t) -> String? {
        guard let line = LockTableExclusion.commandLine(of: pid) else { return nil }
        let words = line.split(separator: " ")
        guard let program = words.first?.split(separator: "/").last else { return nil }
        if words.count > 1, let sub = words.dropFirst().first, sub.allSatisfy({ $0.isLetter || $0 == "-" }), sub.first?.isLetter == true {
            return "\(program) \(sub)"
        }
        return String(program)
    }

    /// The process holding a `flock` on the file open as `descriptor`, from `/proc/locks`: the line of a `FLOCK` lock
    /// on the same device and inode (`FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF`). Nil where `/proc`
    /// does not say.
    static func holderOfFlock(on descriptor: Int32) -> pid_t? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        let device = UInt64(info.st_dev)
        // glibc's gnu_dev_major/minor, as the kernel prints them in hex.
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
        let minor = (device & 0xff) | ((device >> 12) & ~0xff)
        let wanted = String(major, radix: 16, uppercase: false).leftPadded(to: 2) + ":"
            + String(minor, radix: 16, uppercase: false).leftPadded(to: 2) + ":" + String(UInt64(info.st_ino))
        guard let text = FileSystem.readWholeFile("/proc/locks") else { return nil }
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // "1:" "FLOCK" "ADVISORY" "WRITE" pid dev:inode start end; a waiter's line has "->" after the number.
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == wanted, let pid = pid_t(fields[4]) else { continue }
            return pid
        }
        return nil
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
