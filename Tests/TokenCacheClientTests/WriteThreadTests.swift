import Dispatch
import Foundation
import Synchronization
import Testing

@testable import TokenCacheClient

/// The client's writes run on a thread of their own, in order, and never on the caller's.
@Suite struct WriteThreadTests {
    @Test func jobsRunOnTheWriteThreadInSubmissionOrder() async throws {
        let thread = WriteThread(name: "test writer")
        #expect(!WriteThread.isCurrent)
        #expect(try await thread.run { WriteThread.isCurrent })
        let order = Mutex<[Int]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Submitted one after another from one task: they must run in that order.
            for index in 0..<50 { try await thread.run { order.withLock { $0.append(index) } } }
            try await group.waitForAll()
        }
        #expect(order.withLock { $0 } == Array(0..<50))
    }

    @Test func blockedWritesLeaveTheCooperativePoolFree() async throws {
        let thread = WriteThread(name: "test writer")
        // More blocked writes than the pool has threads: run on the pool, they would leave no thread for anything.
        let writes = ProcessInfo.processInfo.activeProcessorCount + 2
        let release = DispatchSemaphore(value: 0)
        let flags = Flags()
        let blocked = (0..<writes).map { _ in Task { try await thread.run { release.wait() } } }
        // A watchdog off the pool unblocks them if the pool starves, so that the test fails instead of hanging.
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) {
            guard !flags.finished.load(ordering: .relaxed) else { return }
            flags.timedOut.store(true, ordering: .relaxed)
            for _ in 0..<writes { release.signal() }
        }
        let count = await withTaskGroup(of: Int.self) { group in
            for index in 0..<64 { group.addTask { await Task.yield(); return index } }
            return await group.reduce(0) { count, _ in count + 1 }
        }
        flags.finished.store(true, ordering: .relaxed)
        let timedOut = flags.timedOut.load(ordering: .relaxed)
        #expect(count == 64)
        #expect(!timedOut)
        if !timedOut { for _ in 0..<writes { release.signal() } }
        for write in blocked { try await write.value }
    }

    @Test func anErrorThrownOnTheWriteThreadReachesTheCaller() async throws {
        struct Failure: Error, Equatable {}
        let thread = WriteThread(name: "test writer")
        await #expect(throws: Failure()) { try await thread.run { throw Failure() } }
    }
}

/// What the watchdog and the test tell each other.
private final class Flags: Sendable {
    let finished = Atomic<Bool>(false)
    let timedOut = Atomic<Bool>(false)
}
