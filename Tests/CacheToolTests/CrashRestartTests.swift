import Testing

@testable import cachetool

/// When a crashed child (a salvage that hit a page LMDB crashes on) is started again.
@Suite struct CrashRestartTests {
    @Test func aChildIsRestartedOnlyWhileItMakesProgressAndWithinTheLimit() {
        // The first crash of work that records progress: again.
        #expect(CrashContainment.shouldRestart(afterCrashes: 0, limit: 5, progressAtLastCrash: .none, progressNow: [1]))
        // It moved on since: again; it did not: stop (it would crash at the same place).
        #expect(CrashContainment.shouldRestart(afterCrashes: 1, limit: 5, progressAtLastCrash: .some([1]), progressNow: [2]))
        #expect(!CrashContainment.shouldRestart(afterCrashes: 1, limit: 5, progressAtLastCrash: .some([2]), progressNow: [2]))
        // No progress recorded at all, or the limit reached: stop.
        #expect(!CrashContainment.shouldRestart(afterCrashes: 0, limit: 5, progressAtLastCrash: .none, progressNow: nil))
        #expect(!CrashContainment.shouldRestart(afterCrashes: 5, limit: 5, progressAtLastCrash: .some([1]), progressNow: [2]))
        // Work without a limit (every command but salvage): never.
        #expect(!CrashContainment.shouldRestart(afterCrashes: 0, limit: 0, progressAtLastCrash: .none, progressNow: [1]))
    }
}
