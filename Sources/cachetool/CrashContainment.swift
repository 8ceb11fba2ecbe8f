import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Runs a reading command in a child process of this executable, so that damage LMDB cannot survive becomes a verdict
/// instead of a crash.
///
/// LMDB 0.9 trusts its B-tree pages: one damaged page header can make it read outside a page (SIGSEGV), past the end
/// of the file (SIGBUS) or fail an assertion (SIGABRT), and no error code is ever returned. `verify` and `inspect`,
/// the commands people run on a store they suspect, therefore do their work in a child (the same command line, with
/// stdin, stdout and stderr inherited). If the child dies of a signal, the parent reports the store as damaged with
/// exit code 65; what the child printed before the crash stays on the screen.
enum CrashContainment {
    /// Whether a child that crashed is started again: within the limit, only for work that records its progress, and
    /// only if it moved on since the last crash (otherwise it would crash at the same place again).
    static func shouldRestart(afterCrashes crashes: Int, limit: Int, progressAtLastCrash: [UInt8]??, progressNow: [UInt8]?) -> Bool {
        guard crashes < limit, let progressNow else { return false }
        guard case .some(let previous) = progressAtLastCrash else { return true }
        return previous != progressNow
    }

    /// Set in the child's environment: the child does the work itself.
    static let childVariable = "TOKEN_CACHE_CONTAINED_CHILD"

    /// In the parent: runs this command in a child and exits with its status (or 65 if a signal ended it); never
    /// returns. In the child: returns at once, and the caller does the work.
    /// `storeDirectory` is evaluated only to report a crash, after the child is done. With `crashRetries`, a child
    /// that a signal ended is started again, that many times at most: for work that resumes after the crash and
    /// skips what crashed it (a salvage).
    /// `progress` says how far the work got (for a salvage, its progress file): a child that crashes again with no
    /// progress since the last crash is not started again, since it would only crash at the same place.
    static func delegate(storeDirectory: @autoclosure () -> String, crashRetries: Int = 0, progress: () -> [UInt8]? = { nil }) throws {
        let environment = ProcessInfo.processInfo.environment
        guard environment[childVariable] == nil else { return }
        var crashes = 0
        var progressAtLastCrash: [UInt8]?? = .none
        while true {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
            child.arguments = Array(CommandLine.arguments.dropFirst())
            child.environment = environment.merging([childVariable: "1"]) { $1 }
            do {
                try child.run()
            } catch {
                Output.error("unsupportedEnvironment: cannot start a child process to read the store safely (\(error))")
                throw ExitCode(78)
            }
            child.waitUntilExit()
            if child.terminationReason == .exit { throw ExitCode(child.terminationStatus) }
            let now = progress()
            if shouldRestart(afterCrashes: crashes, limit: crashRetries, progressAtLastCrash: progressAtLastCrash, progressNow: now) {
                progressAtLastCrash = .some(now)
                crashes += 1
                Output.note("reading a damaged page crashed LMDB (signal \(child.terminationStatus)); going on after it")
                continue
            }
            Output.error(
                "corruptStore: reading the store at \(storeDirectory()) crashed LMDB (signal \(child.terminationStatus)): a page of its "
                    + "B-tree is damaged, and LMDB has no checksums to report it otherwise. Anything listed above was read before "
                    + "the crash. Restore it from a backup, `cachetool salvage` copies what can still be read into a new store, "
                    + "or `cachetool quarantine --force` moves it aside (kept, as STORE.corrupt-TIMESTAMP) and creates an empty one"
            )
            throw ExitCode(65)
        }
    }
}
