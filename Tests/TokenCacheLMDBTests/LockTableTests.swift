import Foundation
import Testing
import TokenCacheLMDB

#if canImport(Glibc)
import Glibc
#endif

/// The two defences against a stale lock table: openers serialised by `open.lock`, and writes that refuse to
/// commit unless they build on the newest meta page.
@Suite struct LockTableTests {
    /// Byte offset of the lock table's "last committed transaction id" in `lock.mdb` (LMDB 0.9's `MDB_txbody`:
    /// two 32-bit words, the reader mutex, then the id) with POSIX robust mutexes, as on Linux.
    private static let lastTransactionIDOffset = 8 + MemoryLayout<pthread_mutex_t>.size

    /// Runs a short shell command in a child process: the test process must not open and close `lock.mdb`
    /// itself, which would drop the `fcntl` locks its own environment holds on that file.
    private func shell(_ command: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(command)")
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The larger of the two meta pages' transaction ids, as stored in the file.
    private func newestMetaTransactionID(_ environment: Environment) throws -> UInt64 {
        let pages = try environment.metaPages()
        return max(pages.page0, pages.page1)
    }

    @Test func aWriteOverAStaleLockTableIsRefusedAndTheNewestCommitSurvives() throws {
        let directory = try TemporaryDirectory()
        var newestBefore: UInt64 = 0
        do {
            let (environment, db) = try makeStore(in: directory)
            // Commit until the newest commit sits in meta page 1: the page a write from a zeroed table overwrites.
            var index = 0
            repeat {
                index += 1
                try environment.write { try $0.put(in: db, key: "k\(index)", value: "v\(index)") }
                newestBefore = try newestMetaTransactionID(environment)
            } while newestBefore % 2 == 0
            let lockFile = directory.path + "/lock.mdb"
            let offset = Self.lastTransactionIDOffset
            // The table agrees with the meta pages (this checks the offset), then is zeroed as a killed opener leaves it.
            #expect(try shell("od -An -t u8 -j \(offset) -N 8 '\(lockFile)'") == "\(newestBefore)")
            _ = try shell("dd if=/dev/zero of='\(lockFile)' bs=1 seek=\(offset) count=8 conv=notrunc 2>/dev/null")
            #expect(try shell("od -An -t u8 -j \(offset) -N 8 '\(lockFile)'") == "0")

            #expect(throws: LMDBError.staleLockTable) {
                try environment.write { try $0.put(in: db, key: "late", value: "x") }
            }
            #expect(try newestMetaTransactionID(environment) == newestBefore)
        }
        // Once every user has closed it, the next opener re-initialises the table from the meta pages.
        let (environment, db) = try makeStore(in: directory)
        #expect(try environment.read { try $0.string(in: db, forKey: "k1") } == "v1")
        let last = try environment.read { try $0.keys(in: db, prefix: "k") }.count
        #expect(try environment.read { try $0.string(in: db, forKey: "k\(last)") } == "v\(last)")
        #expect(try newestMetaTransactionID(environment) == newestBefore)
        try environment.write { try $0.put(in: db, key: "late", value: "x") }
        #expect(try newestMetaTransactionID(environment) == newestBefore + 1)
    }

    @Test func anOpenWaitsForTheOpenLock() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/open.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(flock(fd, LOCK_EX) == 0)

        let opened = DispatchSemaphore(value: 0)
        let outcome = Log()
        let storePath = directory.path
        let thread = Thread {
            do {
                let (environment, _) = try makeStore(at: storePath)
                outcome.append("opened \(environment.directory.isEmpty ? "" : "ok")")
            } catch {
                outcome.append("failed \(error)")
            }
            opened.signal()
        }
        thread.start()
        #expect(opened.wait(timeout: .now() + 0.5) == .timedOut, "the open did not wait for open.lock")
        #expect(flock(fd, LOCK_UN) == 0)
        #expect(opened.wait(timeout: .now() + 10) == .success)
        #expect(outcome.all == ["opened ok"])
        #expect(try permissions(ofFileAt: path) == 0o600)
    }

    @Test func theOpenLockFileIsOwnerOnlyRegardlessOfUmask() throws {
        let directory = try TemporaryDirectory()
        let previous = umask(0)
        defer { umask(previous) }
        let (environment, _) = try makeStore(in: directory)
        #expect(try permissions(ofFileAt: directory.path + "/open.lock") == 0o600)
        _ = environment
    }
}

@Suite struct MetaPagesTests {
    @Test(arguments: [
        (0, 0, true), (0, 1, true), (2, 1, true), (2, 3, true), (4, 3, true), (1_000_000, 999_999, true),
        (0, 3, false), (4, 1, false), (3, 2, false), (2, 2, false), (6, 3, false), (0, 5, false), (2, 0, false),
    ] as [(UInt64, UInt64, Bool)])
    func metaPageIDsAlternate(page0: UInt64, page1: UInt64, consistent: Bool) {
        #expect(MetaPages(page0: page0, page1: page1).areConsistent == consistent)
    }

    @Test func aFreshAndAWrittenStoreHaveConsistentMetaPages() throws {
        let directory = try TemporaryDirectory()
        let (environment, db) = try makeStore(in: directory)
        var pages = try environment.metaPages()
        #expect(pages.areConsistent)
        for index in 0..<5 {
            let newestBefore = max(pages.page0, pages.page1)
            try environment.write { try $0.put(in: db, key: "k\(index)", value: "v") }
            pages = try environment.metaPages()
            #expect(pages.areConsistent, "\(pages)")
            #expect(max(pages.page0, pages.page1) == newestBefore + 1)
        }
    }
}
