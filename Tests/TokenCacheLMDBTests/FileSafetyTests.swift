import Foundation
import TestSupport
import Testing
import TokenCacheLMDB

@Suite struct FileSafetyTests {
    @Test func dataAndLockFilesAreOwnerOnlyRegardlessOfUmask() throws {
        let directory = try TemporaryDirectory()
        let environment: Environment
        do {
            let previous = umask(0)
            defer { umask(previous) }
            environment = try Environment.open(directory: directory.path, databases: ["t"])
        }
        #expect(try permissions(ofFileAt: directory.path + "/data.mdb") == 0o600)
        #expect(try permissions(ofFileAt: directory.path + "/lock.mdb") == 0o600)
        _ = environment
    }

    @Test func loosenedFileModesAreTightenedAgainOnOpen() throws {
        let directory = try TemporaryDirectory()
        weak var released: Environment?
        do {
            let environment = try Environment.open(directory: directory.path, databases: ["t"])
            released = environment
        }
        #expect(released == nil)
        for file in ["data.mdb", "lock.mdb"] {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: directory.path + "/" + file)
        }
        let environment = try Environment.open(directory: directory.path, databases: ["t"])
        #expect(try permissions(ofFileAt: directory.path + "/data.mdb") == 0o600)
        #expect(try permissions(ofFileAt: directory.path + "/lock.mdb") == 0o600)
        _ = environment
    }

    @Test func aGarbageDataFileIsRefusedWithoutCrashing() throws {
        let directory = try TemporaryDirectory()
        var garbage = [UInt8](repeating: 0, count: 8192)
        var generator = SystemRandomNumberGenerator()
        for index in garbage.indices { garbage[index] = generator.next() }
        try Data(garbage).write(to: directory.url.appendingPathComponent("data.mdb"))

        #expect(throws: LMDBError.invalid) {
            _ = try Environment.open(directory: directory.path, databases: ["t"])
        }
        // The failed open left nothing registered: a second attempt fails the same way.
        #expect(throws: LMDBError.invalid) {
            _ = try Environment.open(directory: directory.path, databases: ["t"])
        }
    }

    @Test func aTruncatedDataFileIsRefusedWithoutCrashing() throws {
        let directory = try TemporaryDirectory()
        let dataPath = directory.path + "/data.mdb"
        weak var released: Environment?
        do {
            let (environment, db) = try makeStore(in: directory)
            let value = [UInt8](repeating: 0x5a, count: 64 << 10)
            for batch in 0..<4 {
                try environment.write { txn throws in
                    for index in 0..<8 {
                        try value.withUnsafeBytes { try txn.put(in: db, key: bytes("k\(batch)-\(index)"), value: $0) }
                    }
                }
            }
            released = environment
        }
        #expect(released == nil)  // closed and unregistered before we touch the file
        let fullSize = try fileSize(atPath: dataPath)
        #expect(fullSize >= 2_000_000)

        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: dataPath))
        try handle.truncate(atOffset: UInt64(fullSize / 2))
        try handle.close()

        #expect {
            _ = try Environment.open(directory: directory.path, databases: ["t"])
        } throws: { error in
            [LMDBError.truncatedDataFile, .invalid].contains(error as? LMDBError)
        }
        // Read-only opens are checked too.
        var options = EnvironmentOptions()
        options.readOnly = true
        #expect(throws: LMDBError.truncatedDataFile) {
            _ = try Environment.open(directory: directory.path, databases: ["t"], options: options)
        }
    }

    /// LMDB 0.9 can leave data.mdb one page short of `(last_pgno + 1) * pagesize` when the highest page was
    /// allocated and freed in the same transaction ("loose" pages are not written). This operation sequence
    /// reproduces that on liblmdb 0.9.24 at step 9 (found with a C harness using the same generator). Runs up to
    /// 12 steps, one transaction each, and calls `afterStep` with the step and whether the file is now short;
    /// stops when it returns false.
    private func runLoosePageSequence(
        _ environment: Environment, _ db: Database, dataPath: String, afterStep: (Int, Bool) -> Bool
    ) throws {
        let filler = [UInt8](repeating: 0x78, count: 4000)
        var generator = SplitMix64(seed: 928)
        for step in 0..<12 {
            try environment.write { txn throws in
                let operations = Int(generator.next() % 300)
                for _ in 0..<operations {
                    let keyNumber = generator.next() % 2000
                    let isDelete = generator.next() % 2 == 0
                    let isBig = generator.next() % 2 == 1
                    let size = Int(generator.next() % (isBig ? 4000 : 200))
                    let digits = String(keyNumber)
                    let key = bytes("k" + String(repeating: "0", count: max(0, 5 - digits.count)) + digits)
                    if isDelete {
                        try txn.delete(in: db, key: key)
                    } else {
                        try filler.withUnsafeBytes {
                            try txn.put(in: db, key: key, value: UnsafeRawBufferPointer(rebasing: $0[0..<size]))
                        }
                    }
                }
            }
            let info = environment.info
            let isShort = try fileSize(atPath: dataPath) < (info.lastPageNumber + 1) * info.pageSize
            guard afterStep(step, isShort) else { return }
        }
    }

    /// The wrapper pads the file after such a commit, so the store reopens instead of looking truncated.
    @Test func aHealthyStoreIsNeverShorterThanItsLastPage() throws {
        let directory = try TemporaryDirectory()
        weak var released: Environment?
        do {
            let (environment, db) = try makeStore(in: directory) { $0.initialMapSize = 64 << 20 }
            try runLoosePageSequence(environment, db, dataPath: directory.path + "/data.mdb") { step, isShort in
                #expect(!isShort, "step \(step): the file is shorter than its last page")
                return true
            }
            released = environment
        }
        #expect(released == nil)
        _ = try makeStore(in: directory)
    }

    /// A writer killed between such a commit and its padding leaves the file short: every later open must still
    /// accept it (it is not truncation), and a writable open pads it.
    @Test func aStoreLeftShortByUnwrittenLoosePagesOpensAndIsPadded() throws {
        let directory = try TemporaryDirectory()
        let dataPath = directory.path + "/data.mdb"
        var shortAt: Int?
        var expected: [String: Int] = [:]
        weak var released: Environment?
        do {
            let (environment, db) = try makeStore(in: directory) { $0.initialMapSize = 64 << 20 }
            LMDBFaultInjection.arm(.padDataFile, on: environment, failingWith: .ioError, times: 1000)
            defer { LMDBFaultInjection.disarm(environment) }
            try runLoosePageSequence(environment, db, dataPath: dataPath) { step, isShort in
                if isShort { shortAt = step }
                return !isShort
            }
            try environment.read { txn in
                try txn.forEach(in: db, prefix: []) { key, value in
                    expected[String(decoding: key, as: UTF8.self)] = value.count
                    return true
                }
            }
            released = environment
        }
        #expect(released == nil)
        try #require(shortAt != nil, "the sequence no longer leaves the file short on this liblmdb")
        let shortSize = try fileSize(atPath: dataPath)

        var readOnly = EnvironmentOptions()
        readOnly.readOnly = true
        for options in [readOnly, EnvironmentOptions()] {
            let environment = try Environment.open(directory: directory.path, databases: ["t"], options: options)
            let db = try #require(environment.database("t"))
            var found: [String: Int] = [:]
            try environment.read { txn in
                try txn.forEach(in: db, prefix: []) { key, value in
                    found[String(decoding: key, as: UTF8.self)] = value.count
                    return true
                }
            }
            #expect(found == expected)
            let info = environment.info
            let padded = try fileSize(atPath: dataPath) >= (info.lastPageNumber + 1) * info.pageSize
            #expect(padded == !options.readOnly, "read-only: \(options.readOnly), size \(shortSize)")
        }
    }
}
