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
/// stdin, stdout and stderr inherited; a ``ContainedChild``, which ends with its parent). If the child dies of a
/// crash signal, the parent reports the store as damaged with exit code 65; what the child printed before the crash
/// stays on the screen. If a signal from outside ends it (Ctrl-C, `kill`, the OOM killer), that is no verdict on the
/// store: the parent ends by the same signal.
enum CrashContainment {
    /// Work that records how far it got, so that a child that crashed can be started again to go on after the crash
    /// (a salvage).
    struct Resumption {
        /// How many times a crashed child is started again, at most.
        var crashRetries: Int
        /// How far the work got (for a salvage, its progress file): a child that crashes again with no progress since
        /// the last crash is not started again, since it would only crash at the same place.
        var progress: () -> [UInt8]?
        /// Records a crash seen by the parent, so that the work started again skips what crashed it (the work cannot
        /// tell a crash from a kill itself).
        var recordCrash: () throws -> Void
        /// Said when a signal from outside stopped the child: how to go on.
        var howToContinue: String
    }

    /// The signals a child raises itself when reading damaged pages crashes it: a bad address (SIGSEGV), a page past
    /// the end of the file (SIGBUS), LMDB's assertions (SIGABRT), an arithmetic fault (SIGFPE) and a trap of the Swift
    /// runtime (SIGILL on x86-64, SIGTRAP on arm64). Any other signal came from outside.
    static let crashSignals: Set<Int32> = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP]

    /// Whether a crashed child is started again: within the limit, only for work that records its progress, and
    /// only if it moved on since the last crash (otherwise it would crash at the same place again).
    static func shouldRestart(afterCrashes crashes: Int, limit: Int, progressAtLastCrash: [UInt8]??, progressNow: [UInt8]?) -> Bool {
        guard crashes < limit, let progressNow else { return false }
        guard case .some(let previous) = progressAtLastCrash else { return true }
        return previous != progressNow
    }

    /// Set in the child's environment, to the parent's pid: the child does the work itself.
    static let childVariable = "TOKEN_CACHE_CONTAINED_CHILD"

    /// In the parent: runs this command in a child and exits with its status (65 if a crash ended it, the same signal
    /// if one from outside did); never returns. In the child: returns at once, and the caller does the work.
    /// `storeDirectory` is evaluated only to report a crash, after the child is done. With `resumption`, a child
    /// that crashed is recorded as such and started again, for work that resumes after the crash and skips what
    /// crashed it.
    static func delegate(storeDirectory: @autoclosure () -> String, resumption: Resumption? = nil) throws {
        let environment = ProcessInfo.processInfo.environment
        if let parent = environment[childVariable] {
            try ContainedChild.endWithParent(pid_t(parent) ?? -1)
            return
        }
        try ContainedChild.forwardSignals()
        var crashes = 0
        var progressAtLastCrash: [UInt8]?? = .none
        while true {
            let ending = try ContainedChild.run(
                arguments: Array(CommandLine.arguments.dropFirst()),
                environment: environment.merging([childVariable: String(getpid())]) { $1 }
            )
            let signal: Int32
            switch ending {
            case .exited(let status): throw ExitCode(status)
            case .signalled(let number): signal = number
            }
            guard crashSignals.contains(signal) else {
                if let resumption { Output.note("stopped by signal \(signal), not by damage: \(resumption.howToContinue)") }
                ContainedChild.end(by: signal)
            }
            try resumption?.recordCrash()
            if let stop = ContainedChild.receivedSignal { ContainedChild.end(by: stop) }
            let now = resumption?.progress()
            if shouldRestart(afterCrashes: crashes, limit: resumption?.crashRetries ?? 0, progressAtLastCrash: progressAtLastCrash, progressNow: now) {
                progressAtLastCrash = .some(now)
                crashes += 1
                Output.note("reading a damaged page crashed LMDB (signal \(signal)); going on after it")
                continue
            }
            Output.error(
                "corruptStore: reading the store at \(storeDirectory()) crashed LMDB (signal \(signal)): a page of its "
                    + "B-tree is damaged, and LMDB has no checksums to report it otherwise. Anything listed above was read before "
                    + "the crash. Restore it from a backup, `cachetool salvage` copies what can still be read into a new store, "
                    + "or `cachetool quarantine --force` moves it aside (kept, as STORE.corrupt-TIMESTAMP) and creates an empty one"
            )
            throw ExitCode(65)
        }
    }
}
