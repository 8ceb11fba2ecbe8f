import Foundation
import Synchronization
import TestSupport
import Testing
import TokenCacheLMDB

@Suite struct ConcurrencyTests {
    @Test func concurrentReadersSeeConsistentSnapshotsWhileAWriterCommitsAndGrowsTheMap() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory) {
            $0.initialMapSize = 1 << 20
            $0.maximumMapSize = 256 << 20
        }
        let writes = 150
        let valueSize = 16 << 10
        let log = Log()
        let writerDone = Flag()
        let readsPerformed = Counter()

        @Sendable func key(_ index: Int) -> [UInt8] { bytes(String(format: "k%05d", index)) }

        let writer: @Sendable () -> Void = {
            defer { writerDone.set() }
            for index in 0..<writes {
                do {
                    try environment.write { txn throws in
                        let value = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: valueSize)
                        try value.withUnsafeBytes { try txn.put(in: db, key: key(index), value: $0) }
                        try withUnsafeBytes(of: UInt64(index + 1).bigEndian) {
                            try txn.put(in: db, key: bytes("count"), value: $0)
                        }
                    }
                } catch {
                    log.append("write \(index): \(error)")
                    return
                }
            }
        }
        let reader: @Sendable () -> Void = {
            var generator = SystemRandomNumberGenerator()
            repeat {
                do {
                    try environment.read { txn throws in
                        let written = try txn.withValue(in: db, forKey: bytes("count")) {
                            Int(UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)))
                        } ?? 0
                        let entries = try txn.count(in: db)
                        if entries != (written == 0 ? 0 : written + 1) {
                            log.append("snapshot has \(entries) entries for count \(written)")
                        }
                        if written > 0 {
                            let index = Int.random(in: 0..<written, using: &generator)
                            let intact = try txn.withValue(in: db, forKey: key(index)) { value in
                                value.count == valueSize && value.allSatisfy { $0 == UInt8(truncatingIfNeeded: index) }
                            }
                            if intact != true { log.append("value \(index) damaged or missing") }
                        }
                        // Nested reads on the same thread are allowed (MDB_NOTLS).
                        _ = try environment.read { try $0.count(in: db) }
                    }
                    readsPerformed.increment()
                } catch {
                    log.append("read: \(error)")
                    return
                }
            } while !writerDone.isSet
        }

        runOnThreads([writer] + Array(repeating: reader, count: 6))

        #expect(log.all.isEmpty, "\(log.all.prefix(5))")
        #expect(readsPerformed.value > 0)
        #expect(environment.mapSize > 1 << 20)
        #expect(try environment.read { try $0.count(in: db) } == writes + 1)
    }

    @Test func concurrentWritersOnSeveralThreadsAreSerialised() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory) { $0.initialMapSize = 1 << 20 }
        let log = Log()
        runOnThreads((0..<4).map { thread in
            {
                for index in 0..<40 {
                    do {
                        try environment.write { txn throws in
                            let current = try txn.withValue(in: db, forKey: bytes("counter")) {
                                UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self))
                            } ?? 0
                            try withUnsafeBytes(of: (current + 1).bigEndian) {
                                try txn.put(in: db, key: bytes("counter"), value: $0)
                            }
                            let filler = [UInt8](repeating: 1, count: 8 << 10)
                            try filler.withUnsafeBytes { try txn.put(in: db, key: bytes("t\(thread)-\(index)"), value: $0) }
                        }
                    } catch {
                        log.append("\(error)")
                    }
                }
            }
        })
        #expect(log.all.isEmpty, "\(log.all.prefix(5))")
        let counter = try environment.read { txn throws in
            try txn.withValue(in: db, forKey: bytes("counter")) { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }
        }
        #expect(counter == 160)
    }

    @Test func aNestedWriteOnTheSameThreadThrowsNestedWrite() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        try environment.write { txn throws in
            try txn.put(in: db, key: "outer", value: "1")
            #expect(throws: LMDBError.nestedWrite) {
                try environment.write { inner in try inner.put(in: db, key: "inner", value: "2") }
            }
            // Also from inside a read nested in the write.
            try environment.read { _ in
                #expect(throws: LMDBError.nestedWrite) { try environment.write { _ in } }
            } as Void
        }
        try environment.read { txn throws in
            #expect(try txn.string(in: db, forKey: "outer") == "1")
            #expect(try txn.string(in: db, forKey: "inner") == nil)
        }
        // The flag is cleared afterwards, also after a throwing body.
        _ = try? environment.write { _ in throw LMDBError.notFound }
        try environment.write { txn in try txn.put(in: db, key: "after", value: "3") }
    }

    @Test func aWriteInsideAReadOnTheSameThreadWorks() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        try environment.read { outer throws in
            try environment.write { txn in try txn.put(in: db, key: "k", value: "v") }
            // The outer snapshot predates the write.
            #expect(try outer.string(in: db, forKey: "k") == nil)
        }
        #expect(try environment.read { try $0.string(in: db, forKey: "k") } == "v")
    }

    @Test func writesOnDifferentEnvironmentsMayNestOnOneThread() throws {
        let first = try TemporaryDirectory()
        let second = try TemporaryDirectory()
        let (a, dbA) = try makeStore(in: first)
        let (b, dbB) = try makeStore(in: second)
        try a.write { txnA throws in
            try txnA.put(in: dbA, key: "k", value: "a")
            try b.write { txnB in try txnB.put(in: dbB, key: "k", value: "b") }
        }
        #expect(try a.read { try $0.string(in: dbA, forKey: "k") } == "a")
        #expect(try b.read { try $0.string(in: dbB, forKey: "k") } == "b")
    }

    @Test func manyConcurrentReadsDoNotExhaustTheReaderTable() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory) { $0.maxReaders = 8 }
        try environment.write { txn in try txn.put(in: db, key: "k", value: "v") }
        let log = Log()
        runOnThreads((0..<6).map { _ in
            {
                for _ in 0..<500 {
                    do {
                        _ = try environment.read { try $0.string(in: db, forKey: "k") }
                    } catch {
                        log.append("\(error)")
                        return
                    }
                }
            }
        })
        #expect(log.all.isEmpty, "\(log.all.prefix(3))")
    }

    #if os(Linux)
    @Test func usingAnEnvironmentInAForkedChildThrowsUsedAfterFork() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        try environment.write { txn in try txn.put(in: db, key: "k", value: "v") }
        // Warm up everything the child touches, so it needs no lazily initialised state.
        _ = (LMDBError.usedAfterFork as any Error) as? LMDBError
        _ = try environment.read { try $0.count(in: db) }

        let child = fork()
        if child == 0 {
            var code: Int32 = 1
            do {
                _ = try environment.read { try $0.count(in: db) }
            } catch {
                code = (error as? LMDBError) == .usedAfterFork ? 42 : 2
            }
            _exit(code)
        }
        #expect(child > 0)
        var status: Int32 = 0
        var waited: pid_t = 0
        for _ in 0..<1_000 {
            waited = waitpid(child, &status, WNOHANG)
            if waited != 0 { break }
            usleep(10_000)
        }
        if waited == 0 {
            kill(child, SIGKILL)
            _ = waitpid(child, &status, 0)
            Issue.record("forked child did not exit")
            return
        }
        let exitedNormally = status & 0x7f == 0
        #expect(exitedNormally && (status >> 8) & 0xff == 42)
        // The parent is unaffected.
        #expect(try environment.read { try $0.string(in: db, forKey: "k") } == "v")
    }
    #endif

    @Test func usingATransactionAfterItsClosureReturnedTraps() async throws {
        // The directory belongs to this (parent) process: the child traps, so nothing it created would be removed.
        let directory = try TemporaryDirectory()
        let result = await #expect(processExitsWith: .runtimeTrap, observing: [\.standardErrorContent]) { [path = directory.path as String] in
            let (environment, db) = try makeStore(at: path)
            var escaped: ReadTransaction?
            try environment.read { escaped = $0 }
            _ = try escaped?.count(in: db)
        }
        #expect(result?.reportsTrap("Fatal error: TokenCacheLMDB: a transaction was used after the read/write closure that received it returned") == true)
    }
}

final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
