import CBenchProbes

#if canImport(Glibc)
import Glibc
#endif

/// What a measured call costs besides time: allocation calls (always counted, see `bench_probes.h`) and user-space
/// instructions (where the machine exposes hardware counters; many virtual machines do not).
struct BenchProbes {
    /// The per-call averages of one run of calls.
    struct PerCall: Equatable {
        /// nil in a sanitizer build, whose runtime owns the allocator.
        var allocations: Double?
        /// nil when this machine has no instruction counter.
        var instructions: Double?
    }

    /// Runs `body` (which makes `calls` calls) on this thread and returns its allocations and instructions per call.
    static func measure(calls: Int, _ body: () throws -> Void) rethrows -> PerCall {
        precondition(calls > 0)
        let counter = tc_instruction_counter_open()
        defer { if counter >= 0 { close(counter) } }
        let instructionsBefore = counter >= 0 ? tc_instruction_counter_read(counter) : -1
        let allocationsBefore = tc_thread_allocations()
        try body()
        let allocationsAfter = tc_thread_allocations()
        let instructionsAfter = counter >= 0 ? tc_instruction_counter_read(counter) : -1
        let instructions = instructionsBefore >= 0 && instructionsAfter >= instructionsBefore
            ? Double(instructionsAfter - instructionsBefore) / Double(calls) : nil
        let allocations = tc_allocations_counted() == 1 ? Double(allocationsAfter &- allocationsBefore) / Double(calls) : nil
        return PerCall(allocations: allocations, instructions: instructions)
    }

    /// Whether this machine gives the process an instruction counter.
    static var instructionCounterAvailable: Bool {
        let counter = tc_instruction_counter_open()
        guard counter >= 0 else { return false }
        close(counter)
        return true
    }
}
