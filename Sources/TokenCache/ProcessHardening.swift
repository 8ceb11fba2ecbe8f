internal import CCrashGuard

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Protections a process that holds tokens applies to itself once, first thing in `main`, before any secret is in
/// memory. `cachetool` applies ``apply(processName:)``; an auth client linking the library should too, unless it
/// has its own crash reporting that it has checked never prints or uploads memory.
///
/// A crash must not write what the process had in memory anywhere:
/// * **Core dumps** would put decrypted tokens and unwrapped data keys on disk: ``disableCoreDumps()``.
/// * **Swift's backtracer**, on by default on Linux, prints the crashed thread's registers and the memory they point
///   at to standard error, where decrypted token bytes have been seen: ``suppressCrashReports(processName:)``
///   replaces its signal handlers with one that prints a single fixed line and ends the process with the same
///   signal. (Setting `SWIFT_BACKTRACE=enable=no` in the environment does the same for the backtracer, but only if
///   it is set before the process starts.)
public enum ProcessHardening {
    /// Both protections below.
    /// - Throws: ``TokenCacheError`` `.unsupportedEnvironment` if either could not be applied.
    public static func apply(processName: String) throws {
        try disableCoreDumps()
        try suppressCrashReports(processName: processName)
    }

    /// Sets the core-dump size limit (`RLIMIT_CORE`), soft and hard, to zero.
    public static func disableCoreDumps() throws {
        var limit = rlimit(rlim_cur: 0, rlim_max: 0)
        guard setrlimit(Int32(RLIMIT_CORE.rawValue), &limit) == 0 else {
            throw TokenCacheError(.unsupportedEnvironment, "could not disable core dumps (errno \(errno))")
        }
    }

    /// On SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGABRT, SIGFPE and SIGSYS, writes only
    /// "`processName`: crashed with signal N; no crash report was written, because it could contain secrets" to
    /// standard error, then lets the signal end the process as it would by default (exit status 128 + N in a shell).
    /// Call it after anything else that installs handlers for these signals.
    public static func suppressCrashReports(processName: String) throws {
        guard tc_crash_guard_install(processName) == 0 else {
            throw TokenCacheError(.unsupportedEnvironment, "could not install the crash handlers (errno \(errno))")
        }
    }
}
