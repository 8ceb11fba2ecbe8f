import ArgumentParser
internal import CChildLifetime
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A run of this executable in a child process that cannot outlive its parent, for ``CrashContainment``.
///
/// The child stays in the parent's process group, unlike a child of Foundation's `Process` (which gets a group of its
/// own): the terminal's Ctrl-C, Ctrl-\ and Ctrl-Z reach it as they reach the parent, and it may write to the terminal
/// under `stty tostop`. Signals sent to the parent alone (`kill PID`, a supervisor's SIGTERM) are forwarded to it,
/// and it asks the kernel for SIGKILL when the parent dies: a parent killed by SIGKILL takes its child along, instead
/// of leaving it writing, into a terminal or into a salvage's new store beside the run started again.
enum ContainedChild {
    /// How a child ended.
    enum Ending: Equatable {
        case exited(Int32)
        case signalled(Int32)
    }

    /// In the parent: forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to the child it runs from now on, instead of ending
    /// this process by them. Once, before the first child.
    static func forwardSignals() throws {
        guard tc_forward_signals_install() == 0 else {
            Output.error("unsupportedEnvironment: cannot forward signals to a child process (errno \(errno))")
            throw ExitCode(78)
        }
    }

    /// The last of the forwarded signals this process received, if any: the user asked it to stop.
    static var receivedSignal: Int32? {
        let signal = tc_forward_signals_received()
        return signal == 0 ? nil : signal
    }

    /// In the parent: runs this executable with `arguments` (after the program name) and `environment`, and waits
    /// for it to end.
    static func run(arguments: [String], environment: [String: String]) throws -> Ending {
        let argv = ([CommandLine.arguments.first ?? "cachetool"] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let started = posix_spawn(&pid, "/proc/self/exe", nil, nil, argv, envp)
        guard started == 0 else {
            Output.error("unsupportedEnvironment: cannot start a child process to read the store safely (\(String(cString: strerror(started))))")
            throw ExitCode(78)
        }
        tc_forward_signals_to(pid)
        // Waited for without reaping first, so that forwarding stops while the pid is still the child's.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 && errno == EINTR {}
        tc_forward_signals_to(0)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // <sys/wait.h>'s macros, which Swift does not import.
        return status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
    }

    /// In the child: SIGKILL when `parent` dies, whatever ends it. A child whose parent is gone already (it died
    /// before the death signal was asked for) stops at once.
    static func endWithParent(_ parent: pid_t) throws {
        guard tc_end_with_parent(parent) == 0 else {
            Output.error("the process that started this one (pid \(parent)) has ended; stopping")
            throw ExitCode(75)
        }
    }

    /// Ends this process by `signal` as the child ended, so that a shell or supervisor sees what it sent (a script
    /// stops on Ctrl-C; `timeout` reports its SIGTERM); never returns.
    static func end(by signal: Int32) -> Never {
        Glibc.signal(signal, SIG_DFL)
        var only = sigset_t()
        sigemptyset(&only)
        sigaddset(&only, signal)
        sigprocmask(SIG_UNBLOCK, &only, nil)
        raise(signal)
        exit(128 + signal)
    }
}
