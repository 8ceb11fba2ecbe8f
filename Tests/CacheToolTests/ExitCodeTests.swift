import Foundation
import Testing
import TokenCache

#if canImport(Glibc)
import Glibc
#endif

/// One case per exit code `cachetool --help` documents (sysexits): the condition that gives it, through the binary.
/// 74 (storage full) needs a small filesystem and is `FullDiskTests`'s; 75 needs a process holding the store open and
/// has its own test below.
@Suite struct ExitCodeTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let code: Int32
        let condition: String
        /// Prepares the store (created, with one sample record set) and returns the arguments to run.
        let arguments: @Sendable (CLIStore) throws -> [String]
        var testDescription: String { "\(code): \(condition)" }
    }

    static let cases: [Case] = [
        Case(code: 0, condition: "success") { _ in ["info"] },
        Case(code: 64, condition: "unknown option") { _ in ["info", "--no-such-option"] },
        Case(code: 64, condition: "an argument value the library rejects") { _ in
            ["lookup", "--client-id", "c", "--account", "u.t", "--authority", "not a url", "--scopes", "s"]
        },
        Case(code: 65, condition: "malformed input data") { store in
            try "{\"access_token\":".write(toFile: store.root + "/bad.json", atomically: true, encoding: .utf8)
            return ["ingest", "--client-id", "c", "--authority", "https://login.microsoftonline.com/common", "--scopes", "s", store.root + "/bad.json"]
        },
        Case(code: 66, condition: "no store there") { store in ["info", "--store", store.root + "/elsewhere"] },
        Case(code: 77, condition: "the wrong key") { store in
            let other = store.root + "/other-key"
            try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: other))
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: other)
            return ["info", "--key-file", other]
        },
        Case(code: 78, condition: "a store format newer than this build") { store in
            try Self.raiseReadVersion(of: store)
            return ["info"]
        },
    ]

    @Test(arguments: cases)
    func exitCode(_ testCase: Case) throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let arguments = try testCase.arguments(store)
            let run = try store.run(arguments)
            #expect(run.exitedNormally && run.status == testCase.code, "\(arguments): \(run.output)")
            if testCase.code != 0 { #expect(!run.stderr.isEmpty, "an error says what was wrong") }
        }
    }

    /// 75, "conflict, retry later": a write refused because the lock table no longer names the newest commit (what
    /// a program killed inside LMDB's open leaves while others hold the store open). The test process holds the store
    /// open, the table's last-transaction field is zeroed from a child process (opening `lock.mdb` here would drop
    /// this process's `fcntl` locks), and a writing command must refuse, not overwrite the newest commit.
    @Test func aWriteOverAStaleLockTableExits75() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            var before: [EntityKind: Int] = [:]
            do {
                let holder = try TokenStore.open(store.configuration)
                // Commit until the newest commit is in meta page 1, the page a writer starting from a zeroed table would
                // overwrite.
                var writes = 0
                while try LMDBDataFile(store: store).metaTransactionIDs.page1 < LMDBDataFile(store: store).metaTransactionIDs.page0 || writes == 0 {
                    writes += 1
                    try holder.put(AppMetadata(clientID: "client-\(writes)", environment: "login.microsoftonline.com"))
                }
                before = try holder.info().recordCounts
                // LMDB 0.9's MDB_txbody on Linux: two 32-bit words, the robust reader mutex, then the transaction id.
                let offset = 8 + MemoryLayout<pthread_mutex_t>.size
                let zero = try CacheTool.run(
                    [], shell: "dd if=/dev/zero of='\(store.directory)/lock.mdb' bs=1 seek=\(offset) count=8 conv=notrunc 2>/dev/null; exit 0 #"
                )
                #expect(zero.status == 0)
                let run = try store.run(["remove-account", "--account", "alice@contoso.example", "--all-clients"])
                #expect(run.exitedNormally && run.status == 75, "\(run.output)")
                #expect(run.stderr.contains("retry") || run.stderr.contains("lock"), "\(run.stderr)")
            }
            // Nothing was written: once every handle is closed, the next opener sees the newest commit, all of it.
            #expect(try TokenStore.open(store.configuration).info().recordCounts == before)
        }
    }

    /// Sets the store header's read version (bytes 8-9 after the "TKCACHE\0" magic, FORMAT.md §7) to 0xFFFF in every
    /// copy of the header in the data file. The version is checked before anything else in the header.
    static func raiseReadVersion(of store: CLIStore) throws {
        let path = store.directory + "/data.mdb"
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let magic = Array("TKCACHE".utf8) + [0]
        var patched = 0
        var index = 0
        while index + 10 <= bytes.count {
            if bytes[index] == magic[0], Array(bytes[index..<index + 8]) == magic {
                bytes[index + 8] = 0xFF
                bytes[index + 9] = 0xFF
                patched += 1
            }
            index += 1
        }
        #expect(patched > 0, "no header found in data.mdb")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
