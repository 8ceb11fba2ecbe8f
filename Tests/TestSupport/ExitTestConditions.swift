public import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the exit tests of every test target share: how to expect a Swift runtime trap, and not a thrown error.

extension ExitTest.Condition {
    /// How a Swift runtime trap (a failed `precondition`, a `fatalError`) ends the process: the trap instruction
    /// raises SIGILL on x86_64 (`ud2`) and SIGTRAP on arm64 (`brk`). Swift Testing ends an exit test whose body
    /// throws with the same signal, so a test of a trap also checks the runtime's report
    /// (``ExitTest/Result/reportsTrap(_:)``).
    public static var runtimeTrap: Self {
        #if arch(x86_64)
        .signal(SIGILL)
        #else
        .signal(SIGTRAP)
        #endif
    }
}

extension ExitTest.Result {
    /// Whether the process's standard error (pass `observing: [\.standardErrorContent]`) holds the runtime's report
    /// of the trap, such as `"Precondition failed: <message>"` or `"Fatal error: <message>"`. A body that throws
    /// prints no such line. An optimized build traps without printing the message, so there this holds trivially.
    public func reportsTrap(_ report: String) -> Bool {
        #if DEBUG
        String(decoding: standardErrorContent, as: UTF8.self).contains(report)
        #else
        true
        #endif
    }
}
