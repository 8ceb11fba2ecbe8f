import Foundation
import Synchronization
import Testing
@testable import TokenCacheLMDB

/// The gate that keeps map resizes away from live transactions: readers count themselves in per-thread stripes, and
/// the exclusive side must wait for every stripe and hold new readers off until it is done.
@Suite struct TransactionGateTests {
    @Test(arguments: [0, 3, 15, 16, 21])
    func exclusiveWaitsForAReaderOnAnyStripe(stripe: Int) async throws {
        let gate = TransactionGate()
        gate.lockShared(stripe: stripe)
        let ran = Atomic<Bool>(false)
        let done = DispatchSemaphore(value: 0)
        Thread {
            gate.withExclusive { ran.store(true, ordering: .sequentiallyConsistent) }
            done.signal()
        }.start()
        try await Task.sleep(for: .milliseconds(100))
        let ranNow = ran.load(ordering: .sequentiallyConsistent)
        #expect(!ranNow, "the exclusive side ran while a reader held the gate")
        gate.unlockShared(stripe: stripe)
        #expect(done.wait(timeout: .now() + 10) == .success)
        let ranAfter = ran.load(ordering: .sequentiallyConsistent)
        #expect(ranAfter)
    }

    @Test func readersWaitWhileExclusiveIsHeld() async throws {
        let gate = TransactionGate()
        let inside = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), exclusiveDone = DispatchSemaphore(value: 0)
        let exclusiveActive = Atomic<Bool>(false)
        Thread {
            gate.withExclusive {
                exclusiveActive.store(true, ordering: .sequentiallyConsistent)
                inside.signal()
                release.wait()
                exclusiveActive.store(false, ordering: .sequentiallyConsistent)
            }
            exclusiveDone.signal()
        }.start()
        inside.wait()
        let overlapped = Atomic<Bool>(false), entered = Atomic<Int>(0)
        let readersDone = DispatchSemaphore(value: 0)
        for stripe in [1, 7] {
            Thread {
                gate.lockShared(stripe: stripe)
                if exclusiveActive.load(ordering: .sequentiallyConsistent) { overlapped.store(true, ordering: .sequentiallyConsistent) }
                entered.add(1, ordering: .sequentiallyConsistent)
                gate.unlockShared(stripe: stripe)
                readersDone.signal()
            }.start()
        }
        try await Task.sleep(for: .milliseconds(100))
        let enteredNow = entered.load(ordering: .sequentiallyConsistent)
        #expect(enteredNow == 0, "a reader entered while the exclusive side was held")
        release.signal()
        #expect(exclusiveDone.wait(timeout: .now() + 10) == .success)
        for _ in 0..<2 { #expect(readersDone.wait(timeout: .now() + 10) == .success) }
        let enteredAfter = entered.load(ordering: .sequentiallyConsistent)
        #expect(enteredAfter == 2)
        let overlappedNow = overlapped.load(ordering: .sequentiallyConsistent)
        #expect(!overlappedNow)
    }

    /// Many readers on many stripes and repeated exclusive turns: no reader is ever inside with an exclusive holder.
    @Test func sharedAndExclusiveNeverOverlapUnderLoad() throws {
        let gate = TransactionGate()
        let readersInside = Atomic<Int>(0), violations = Atomic<Int>(0), stop = Atomic<Bool>(false)
        let group = DispatchGroup()
        for stripe in 0..<4 {
            group.enter()
            Thread {
                while !stop.load(ordering: .relaxed) {
                    gate.lockShared(stripe: stripe)
                    readersInside.add(1, ordering: .sequentiallyConsistent)
                    readersInside.subtract(1, ordering: .sequentiallyConsistent)
                    gate.unlockShared(stripe: stripe)
                }
                group.leave()
            }.start()
        }
        for _ in 0..<200 {
            gate.withExclusive {
                if readersInside.load(ordering: .sequentiallyConsistent) != 0 { violations.add(1, ordering: .relaxed) }
            }
        }
        stop.store(true, ordering: .relaxed)
        #expect(group.wait(timeout: .now() + 30) == .success)
        let violationsNow = violations.load(ordering: .sequentiallyConsistent)
        #expect(violationsNow == 0)
    }
}
