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

    /// In a process of its own: in a test run, other tests' work occupies the pool too, for as long as it likes.
    @Test func blockedWritesLeaveTheCooperativePoolFree() async throws {
        await #expect(processExitsWith: .success) {
            let thread = WriteThread(name: "test writer")
            // More blocked writes than the pool has threads: run on the pool, they would leave no thread for anything.
            let writes = ProcessInfo.processInfo.activeProcessorCount + 2
            let release = DispatchSemaphore(value: 0)
            let blocked = (0..<writes).map { _ in Task { try await thread.run { release.wait() } } }
            // A watchdog off the pool fails the process if the pool starves, instead of letting it hang: a bound for a
            // hang (64 yields take microseconds), in a process no other test holds up.
            DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(60)) { exit(3) }
            let count = await withTaskGroup(of: Int.self) { group in
                for index in 0..<64 { group.addTask { await Task.yield(); return index } }
                return await group.reduce(0) { count, _ in count + 1 }
            }
            guard count == 64 else { exit(4) }
            for _ in 0..<writes { release.signal() }
            for write in blocked { try await write.value }
        }
    }

    @Test func anErrorThrownOnTheWriteThreadReachesTheCaller() async throws {
        struct Failure: Error, Equatable {}
        let thread = WriteThread(name: "test writer")
        await #expect(throws: Failure()) { try await thread.run { throw Failure() } }
    }
}

