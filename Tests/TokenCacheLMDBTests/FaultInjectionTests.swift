#if DEBUG
import Foundation
import Testing
import TokenCacheLMDB

/// Failures that are hard to provoke for real (a failing disk, another process growing the map, a full
/// reader table), injected at the LMDB call seam of one environment.
@Suite struct FaultInjectionTests {
    @Test func aFailingCommitIsThrownAndNothingIsCommitted() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        defer { LMDBFaultInjection.disarm(environment) }
        for error in [LMDBError.ioError, .noSpace] {
            LMDBFaultInjection.arm(.commit, on: environment, failingWith: error)
            #expect(throws: error) {
                try environment.write { txn in try txn.put(in: db, key: "k", value: "v") }
            }
            #expect(try environment.read { try $0.count(in: db) } == 0)
        }
        // The environment keeps working afterwards.
        try environment.write { txn in try txn.put(in: db, key: "k", value: "v") }
        #expect(try environment.read { try $0.count(in: db) } == 1)
    }

    @Test func aWriteFailureSwallowedByTheBodyStillPreventsTheCommit() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        defer { LMDBFaultInjection.disarm(environment) }
        try environment.write { txn in try txn.put(in: db, key: "kept", value: "1") }
        #expect(throws: LMDBError.txnFull) {
            try environment.write { txn in
                try txn.put(in: db, key: "first", value: "1")
                LMDBFaultInjection.arm(.put, on: environment, failingWith: .txnFull)
                try? txn.put(in: db, key: "second", value: "2")
            }
        }
        #expect(try environment.read { try $0.keys(in: db, prefix: "") } == ["kept"])
    }

    @Test func mapResizedFromAnotherProcessIsAdoptedAndRetried() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        defer { LMDBFaultInjection.disarm(environment) }
        LMDBFaultInjection.arm(.txnBegin, on: environment, failingWith: .mapResized)
        try environment.write { txn in try txn.put(in: db, key: "k", value: "v") }
        LMDBFaultInjection.arm(.txnRenew, on: environment, failingWith: .mapResized)
        LMDBFaultInjection.arm(.txnBegin, on: environment, failingWith: .mapResized)
        #expect(try environment.read { try $0.string(in: db, forKey: "k") } == "v")
        // Inside another transaction of the same thread the map cannot be adopted: the error surfaces.
        try environment.read { _ in
            LMDBFaultInjection.arm(.txnBegin, on: environment, failingWith: .mapResized)
            #expect(throws: LMDBError.mapResized) { try environment.write { _ in } }
        } as Void
    }

    @Test func aFullReaderTableIsRetriedOnceAfterClearingStaleReaders() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory) { $0.maxReaders = 4 }  // pool capacity 1
        defer { LMDBFaultInjection.disarm(environment) }
        try environment.write { txn in try txn.put(in: db, key: "k", value: "v") }
        // Two nested reads: the inner one cannot come from the one-slot pool, so it begins a new transaction.
        let nested = { try environment.read { _ in try environment.read { try $0.string(in: db, forKey: "k") } } }
        LMDBFaultInjection.arm(.txnBegin, on: environment, failingWith: .readersFull)
        #expect(try nested() == "v")
        LMDBFaultInjection.arm(.txnBegin, on: environment, failingWith: .readersFull, times: 2)
        #expect(throws: LMDBError.readersFull) { try nested() }
    }

    @Test func mapFullInjectedIntoAPutGrowsTheMapAndRerunsTheBody() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory) {
            $0.initialMapSize = 1 << 20
            $0.maximumMapSize = 4 << 20
        }
        defer { LMDBFaultInjection.disarm(environment) }
        var runs = 0
        LMDBFaultInjection.arm(.put, on: environment, failingWith: .mapFull)
        try environment.write { txn in
            runs += 1
            try txn.put(in: db, key: "k", value: "v")
        }
        #expect(runs == 2)
        #expect(environment.mapSize == 2 << 20)
        // At the cap the same failure is final.
        LMDBFaultInjection.arm(.put, on: environment, failingWith: .mapFull, times: 10)
        #expect(throws: LMDBError.mapFull) {
            try environment.write { txn in try txn.put(in: db, key: "k2", value: "v") }
        }
        #expect(environment.mapSize == 4 << 20)
        #expect(try environment.read { try $0.keys(in: db, prefix: "") } == ["k"])
    }
}
#endif
