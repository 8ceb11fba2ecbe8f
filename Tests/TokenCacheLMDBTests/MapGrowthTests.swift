import Foundation
import Testing
import TokenCacheLMDB

@Suite struct MapGrowthTests {
    @Test func theMapGrowsUntilTheCapAndThenWritesThrowMapFull() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory) {
            $0.initialMapSize = 1 << 20
            $0.maximumMapSize = 8 << 20
        }
        #expect(environment.mapSize == 1 << 20)

        func value(_ index: Int) -> [UInt8] { [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 64 << 10) }
        func key(_ index: Int) -> [UInt8] { bytes(String(format: "value-%05d", index)) }

        var committed = 0
        var failure: (any Error)?
        var bodyRuns = 0
        for index in 0..<1_000 {
            do {
                try environment.write { txn throws in
                    bodyRuns += 1
                    try value(index).withUnsafeBytes { try txn.put(in: db, key: key(index), value: $0) }
                }
                committed += 1
            } catch {
                failure = error
                break
            }
        }

        #expect(failure as? LMDBError == .mapFull)
        #expect(environment.mapSize > 1 << 20)
        #expect(environment.mapSize == 8 << 20)
        #expect(committed > 16)  // more than 1 MiB was stored
        #expect(bodyRuns > committed + 1)  // some bodies were re-run after growth
        try environment.read { txn throws in
            #expect(try txn.count(in: db) == committed)
            for index in 0..<committed {
                let intact = try txn.withValue(in: db, forKey: key(index)) { $0.elementsEqual(value(index)) }
                #expect(intact == true, "value \(index)")
            }
            // The transaction that hit the cap left nothing behind.
            #expect(try txn.withValue(in: db, forKey: key(committed)) { _ in true } == nil)
        }
        // The store still accepts work that fits: deletes free pages for reuse.
        try environment.write { txn throws in
            for index in 0..<committed / 2 { try txn.delete(in: db, key: key(index)) }
        }
        try environment.write { txn in try txn.put(in: db, key: "small", value: "fits") }
    }

    /// At the cap a delete needs pages too (LMDB copies each page it changes before it frees any): with no reserve,
    /// removing records from a full store fails; with the reserve, a write marked as freeing space succeeds, the map
    /// goes back to the cap after it, and the freed pages take new records.
    @Test(arguments: [0, 1 << 20]) func aFreeingWriteMayUseTheReserveAtTheCap(reserve: Int) throws {
        let directory = try TemporaryDirectory()
        let cap = 1 << 20
        let (environment, db) = try makeStore(in: directory) {
            $0.initialMapSize = cap
            $0.maximumMapSize = cap
            $0.reservedMapSize = reserve
        }
        func key(_ index: Int) -> [UInt8] { bytes(String(format: "key-%06d", index)) }
        let value = [UInt8](repeating: 0x5A, count: 300)
        var stored = 0
        while true {
            do {
                try environment.write { txn in try value.withUnsafeBytes { try txn.put(in: db, key: key(stored), value: $0) } }
                stored += 1
            } catch {
                #expect(error as? LMDBError == .mapFull)
                break
            }
        }
        #expect(stored > 1_000)
        let removeHalf = {
            try environment.write(.freeingSpace) { txn in
                for index in stride(from: 0, to: stored, by: 2) { try txn.delete(in: db, key: key(index)) }
            }
        }
        guard reserve > 0 else {
            #expect(throws: LMDBError.mapFull, performing: removeHalf)
            #expect(try environment.read { try $0.count(in: db) } == stored)
            return
        }
        try removeHalf()
        let info = environment.info
        #expect(environment.mapSize == max(cap, (info.lastPageNumber + 1) * info.pageSize))
        #expect(try environment.read { try $0.count(in: db) } == stored - (stored + 1) / 2)
        // A general write does not get the reserve, but it gets the pages the removal freed.
        for index in 0..<100 {
            try environment.write { txn in try value.withUnsafeBytes { try txn.put(in: db, key: key(stored + index), value: $0) } }
        }
    }

    @Test func growthNeededInsideAReadOnTheSameThreadThrowsMapFullInsteadOfDeadlocking() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory) {
            $0.initialMapSize = 1 << 20
            $0.maximumMapSize = 64 << 20
        }
        let big = [UInt8](repeating: 7, count: 256 << 10)
        let error = environment.readCatching { _ in
            for index in 0..<16 {
                try environment.write { txn throws in
                    try big.withUnsafeBytes { try txn.put(in: db, key: bytes("k\(index)"), value: $0) }
                }
            }
        }
        #expect(error as? LMDBError == .mapFull)
        #expect(environment.mapSize == 1 << 20)
        // Outside the read, the same write grows the map and succeeds.
        try environment.write { txn throws in
            for index in 0..<16 {
                try big.withUnsafeBytes { try txn.put(in: db, key: bytes("k\(index)"), value: $0) }
            }
        }
        #expect(environment.mapSize > 1 << 20)
        #expect(try environment.read { try $0.count(in: db) } == 16)
    }

    @Test func aSingleTransactionLargerThanTheInitialMapIsRetriedUntilItFits() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory) {
            $0.initialMapSize = 1 << 20
            $0.maximumMapSize = 32 << 20
        }
        let value = [UInt8](repeating: 1, count: 32 << 10)
        var runs = 0
        try environment.write { txn throws in
            runs += 1
            for index in 0..<200 {  // about 6.5 MiB in one transaction
                try value.withUnsafeBytes { try txn.put(in: db, key: bytes("k\(index)"), value: $0) }
            }
        }
        #expect(runs >= 2)
        #expect(environment.mapSize >= 8 << 20)
        #expect(try environment.read { try $0.count(in: db) } == 200)
    }
}

extension Environment {
    /// Runs `body` inside a read and returns the error it threw, if any.
    func readCatching(_ body: (ReadTransaction) throws -> Void) -> (any Error)? {
        do {
            try read(body)
            return nil
        } catch {
            return error
        }
    }
}
