import Foundation
import Testing
import TokenCache
import TokenCacheLMDB

/// Security matrix R6: damaged stores are opened in a child process and must give a clear error, never a crash.
@Suite struct DamagedStoreTests {
    private func seeded(_ store: CLIStore) throws {
        #expect(try store.run(["init"]).status == 0)
        #expect(try store.run(["sample-data"]).status == 0)
        // Enough data that the file spans many pages.
        let cache = try TokenStore.open(store.configuration)
        try cache.write { writer in
            for index in 0..<300 {
                try writer.put(IDToken(homeAccountID: "h\(index).t", environment: "e", clientID: "c", realm: "r", secret: Secret(String(repeating: "x", count: 1500))))
            }
        }
    }

    private func expectCleanFailure(_ run: CacheToolRun, _ description: String) {
        #expect(run.exitedNormally, "\(description): killed by a signal: \(run.output)")
        #expect(run.status != 0, "\(description): succeeded")
        #expect(run.stderr.hasPrefix("cachetool: "), "\(description): \(run.output)")
    }

    @Test func aGarbageDataFileGivesAClearError() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            try? FileManager.default.removeItem(atPath: store.directory + "/lock.mdb")
            let garbage = Data((0..<16384).map { _ in UInt8.random(in: 0...255) })
            try garbage.write(to: URL(fileURLWithPath: store.directory + "/data.mdb"))
            chmod(store.directory + "/data.mdb", 0o600)
            let run = try store.run(["inspect"])
            expectCleanFailure(run, "garbage")
            #expect(run.status == 65 && run.stderr.contains("corruptStore"), "\(run.output)")
        }
    }

    @Test(arguments: [0.0, 0.5, 0.9])
    func aTruncatedDataFileGivesAClearError(fraction: Double) throws {
        try CLIStore.with { store in
            try seeded(store)
            let path = store.directory + "/data.mdb"
            let size = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            #expect(truncate(path, off_t(Double(size) * fraction)) == 0)
            let run = try store.run(["inspect"])
            expectCleanFailure(run, "truncated to \(fraction)")
            #expect(run.stderr.contains("corruptStore"), "\(run.output)")
        }
    }

    @Test func truncationToFewPagesGivesAClearError() throws {
        for length in [4096, 8192, 12288] as [off_t] {
            try CLIStore.with { store in
                try seeded(store)
                #expect(truncate(store.directory + "/data.mdb", length) == 0)
                expectCleanFailure(try store.run(["inspect"]), "truncated to \(length)")
            }
        }
    }

    @Test func zeroedMetaPagesGiveAClearError() throws {
        try CLIStore.with { store in
            try seeded(store)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: store.directory + "/data.mdb"))
            try handle.write(contentsOf: Data(count: 8192))
            try handle.close()
            let run = try store.run(["inspect"])
            expectCleanFailure(run, "zeroed meta pages")
        }
    }

    @Test func aCorruptRecordIsReportedAndTheRestIsShown() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            // Flip one byte in the middle of one access token's sealed value, bypassing the library.
            do {
                let environment = try Environment.open(
                    directory: store.directory,
                    databases: ["meta", "accounts", "access_tokens", "refresh_tokens", "id_tokens", "app_metadata"]
                )
                let tokens = try #require(environment.database("access_tokens"))
                try environment.write { txn in
                    var first: ([UInt8], [UInt8])? = nil
                    try txn.forEach(in: tokens, prefix: []) { key, value in
                        first = (Array(key), Array(value))
                        return false
                    }
                    var (key, value) = try #require(first)
                    value[value.count / 2] ^= 0xFF
                    try value.withUnsafeBytes { try txn.put(in: tokens, key: key, value: $0) }
                }
            }
            let run = try store.run(["inspect"])
            #expect(run.exitedNormally && run.status == 65, "\(run.output)")
            #expect(run.stderr.contains("corrupt") && run.stderr.contains("authentication failed"))
            #expect(run.stdout.contains("KIND") && run.stdout.contains("(1 damaged record not shown"), "\(run.stdout)")
        }
    }

    /// A read verb that had to skip a damaged record still prints its answer, names the record on stderr and in
    /// JSON, and exits 65 (it used to exit 0).
    @Test(arguments: [false, true])
    func readVerbsThatSkipADamagedRecordExit65(json: Bool) throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let cache = try TokenStore.open(store.configuration)
            let home = "u.t", host = "login.microsoftonline.com"
            try cache.write { writer in
                try writer.put(Account(homeAccountID: home, environment: host, realm: "t", localAccountID: "u", username: "a@b.c", authorityType: "MSSTS"))
                try writer.put(AccessToken(homeAccountID: home, environment: host, clientID: "c", realm: "t", target: "s",
                                           secret: Secret("AT-1"), cachedAt: 0, expiresOn: Int64.max, extendedExpiresOn: Int64.max))
                try writer.put(RefreshToken(homeAccountID: home, environment: host, clientID: "c", secret: Secret("RT-1")))
            }
            let environment = try Environment.open(directory: store.directory, databases: ["meta", "accounts", "access_tokens", "refresh_tokens", "id_tokens", "app_metadata"])
            let accounts = try #require(environment.database("accounts"))
            try environment.write { txn in
                var entries: [([UInt8], [UInt8])] = []
                try txn.forEach(in: accounts, prefix: []) { key, value in entries.append((Array(key), Array(value))); return true }
                var (key, value) = try #require(entries.first)
                value[value.count - 1] ^= 0x40
                try value.withUnsafeBytes { try txn.put(in: accounts, key: key, value: $0) }
            }
            let lookup = ["lookup", "--client-id", "c", "--account", home, "--authority", "https://login.microsoftonline.com/t", "--scopes", "s"]
            for verb in [["accounts"], lookup] {
                let run = try store.run(verb + (json ? ["--json"] : []))
                #expect(run.exitedNormally && run.status == 65, "\(verb[0]): \(run.output)")
                #expect(run.stderr.contains("skipped corrupt Account record "), "\(verb[0]): \(run.stderr)")
                if json {
                    let document = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
                    let listed = try #require(document["corrupt_records"] as? [[String: Any]])
                    #expect(listed.count == 1 && listed.first?["kind"] as? String == "Account" && (listed.first?["fingerprint"] as? String)?.count == 16, "\(verb[0]): \(listed)")
                }
            }
            // What is not damaged is still answered.
            let answer = try store.run(lookup + ["--json"])
            #expect(answer.stdout.contains("\"outcome\" : \"hit\""), "\(answer.stdout)")
        }
    }

    /// LMDB picks the meta page with the larger transaction id and keeps no checksum: damage that lowers the newer
    /// page's id silently rolls the last commit back. `verify` notices that the two ids no longer alternate.
    @Test func verifyReportsADamagedMetaPageThatRolledBackTheLastCommit() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            for index in 0..<4 {
                let response = #"{"access_token":"AT-\#(index)","token_type":"Bearer","expires_in":3600,"client_info":"eyJ1aWQiOiJ1IiwidXRpZCI6InQifQ"}"#
                let ingest = try CacheTool.run(["ingest", "--client-id", "c", "--authority", "https://login.microsoftonline.com/t",
                                                "--scopes", "s\(index)", "-"], environment: store.environment, stdin: response)
                #expect(ingest.status == 0, "\(ingest.output)")
            }
            #expect(try store.run(["verify"]).status == 0)
            var file = try LMDBDataFile(store: store)
            let ids = file.metaTransactionIDs
            let newer = LMDBDataFile.transactionIDOffset(ofMetaPage: file.newestMetaPage)
            let newest = file.u64(at: newer)
            try #require(newest >= 4 && abs(Int(ids.page0) - Int(ids.page1)) == 1)
            // Clear the highest set bit of the newer id: LMDB now opens the older page.
            let highest = UInt64(1) << (63 - newest.leadingZeroBitCount)
            file.setU64(newest & ~highest, at: newer)
            try file.write()

            let run = try store.run(["verify"])
            #expect(run.exitedNormally && run.status == 65, "\(run.output)")
            #expect(run.stdout.contains("meta pages hold transaction ids"), "\(run.output)")
            let json = try store.run(["verify", "--json"])
            let document = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect((document["meta_page_problem"] as? String)?.contains("rolled back") == true)
        }
    }

    /// LMDB trusts its page headers: damaging one crashes it (SIGSEGV, SIGBUS, an assertion). Every branch and leaf
    /// page's header is damaged in turn, on copies: `verify` and `inspect` must always end with a verdict (0 when the
    /// page is not in use, else 65), never die of a signal.
    @Test func damagedBTreePagesGiveAVerdictNotACrash() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)  // about a dozen B-tree pages
            let original = try Data(contentsOf: URL(fileURLWithPath: store.directory + "/data.mdb"))
            let pageSize = 4096
            func field(_ bytes: Data, _ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
            let pages = (2..<original.count / pageSize).filter { [1, 2].contains(field(original, $0 * pageSize + 10)) }
            try #require(pages.count >= 4)
            // (offset in the page header, new 16-bit value): lower bound, flags, first node offset.
            let mutations: [(Int, Int)] = [(12, 0), (12, 4000), (10, 0), (16, 65000)]
            var contained = 0
            for page in pages {
                for (index, (offset, value)) in mutations.enumerated() {
                    var damaged = original
                    damaged[page * pageSize + offset] = UInt8(value & 0xFF)
                    damaged[page * pageSize + offset + 1] = UInt8(value >> 8)
                    try damaged.write(to: URL(fileURLWithPath: store.directory + "/data.mdb"))
                    for verb in index == 0 ? [["verify"], ["inspect"]] : [["verify"]] {
                        let run = try store.run(verb)
                        #expect(run.exitedNormally && [0, 65].contains(run.status), "page \(page), mutation \(index), \(verb[0]): \(run.output)")
                        if run.stderr.contains("crashed LMDB") {
                            contained += 1
                            #expect(run.stderr.contains("corruptStore") && run.status == 65)
                        }
                    }
                }
            }
            #expect(contained > 0, "no damaged page made LMDB crash: the sweep no longer exercises the containment")
            try original.write(to: URL(fileURLWithPath: store.directory + "/data.mdb"))
            #expect(try store.run(["verify"]).status == 0)
        }
    }

    /// `salvage` on a store with a damaged B-tree page: whatever the damage (some make LMDB crash, and salvage goes on
    /// after the range that crashed it), it exits 0 with a new store that verifies clean and holds only records of
    /// the original, most of them.
    @Test func salvageCopiesWhatAStoreWithADamagedPageStillHolds() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let count = 3_000
            try TokenStore.open(store.configuration).write { writer in
                for index in 0..<count {
                    try writer.put(AccessToken(
                        homeAccountID: "u\(index).t", environment: "login.microsoftonline.com", clientID: "c", realm: "t",
                        target: "s.read", secret: Secret("salvage-\(index)"), cachedAt: 1_800_000_000, expiresOn: 4_000_000_000
                    ))
                }
            }
            let original = try Data(contentsOf: URL(fileURLWithPath: store.directory + "/data.mdb"))
            let pageSize = 4096
            func field(_ bytes: Data, _ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }
            let leaves = (2..<original.count / pageSize).filter { field(original, $0 * pageSize + 10) == 2 }
            try #require(leaves.count >= 10)
            var resumedAfterCrash = 0, lost = 0
            for (round, (page, (offset, value))) in zip([leaves[leaves.count / 3], leaves[leaves.count / 2]], [(12, 4000), (16, 65000)])
                .flatMap({ page, _ in [(page, (12, 4000)), (page, (16, 65000)), (page, (12, 0))] }).enumerated()
            {
                var damaged = original
                damaged[page * pageSize + offset] = UInt8(value & 0xFF)
                damaged[page * pageSize + offset + 1] = UInt8(value >> 8)
                try damaged.write(to: URL(fileURLWithPath: store.directory + "/data.mdb"))
                let target = store.root + "/salvaged-\(round)"
                let run = try store.run(["salvage", "-o", target, "--json"])
                #expect(run.exitedNormally && run.status == 0, "round \(round): \(run.output)")
                if run.stderr.contains("going on after it") { resumedAfterCrash += 1 }
                let copy = try TokenStore.open(Configuration(directory: target, keySource: .keyFile(path: store.keyFile)))
                #expect(try copy.verify().isClean)
                let secrets = Set(try copy.list(AccessToken.self).records.map { $0.entity.secret.reveal() })
                #expect(secrets.isSubset(of: Set((0..<count).map { "salvage-\($0)" })) && secrets.count > count / 2, "round \(round)")
                if secrets.count < count { lost += 1 }
            }
            #expect(lost > 0, "no damage cost a record: the test no longer damages a page that holds any")
            #expect(resumedAfterCrash > 0, "no damage made LMDB crash: the test no longer exercises salvage's restart")
            try original.write(to: URL(fileURLWithPath: store.directory + "/data.mdb"))
        }
    }

    /// A damaged database record in LMDB's main database (here the high byte of the first one's root page number)
    /// makes LMDB fail a read silently and answer MDB_BAD_TXN to the next call: every verb reports damage (65).
    @Test func aDamagedDatabaseRecordIsReportedAsDamage() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            var file = try LMDBDataFile(store: store)
            let mainRoot = Int(file.u64(at: file.newestMetaPage * LMDBDataFile.pageSize + 128))  // the main database's md_root
            try #require(mainRoot > 1 && (mainRoot + 1) * LMDBDataFile.pageSize <= file.bytes.count)
            file.bytes[mainRoot * LMDBDataFile.pageSize + LMDBDataFile.pageSize - 1] ^= 0x80
            try file.write()
            for verb in [["verify"], ["inspect"], ["info"], ["accounts"]] {
                let run = try store.run(verb)
                expectCleanFailure(run, verb[0])
                #expect(run.status == 65 && run.stderr.contains("corruptStore"), "\(verb[0]): \(run.output)")
            }
        }
    }

    /// Read-only verbs open the store read-only: a missing database is reported, never re-created.
    @Test func readCommandsReportAMissingDatabaseAndDoNotCreateIt() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let names = ["meta", "accounts", "access_tokens", "refresh_tokens", "id_tokens", "app_metadata"]
            let damaged = store.root + "/damaged"
            #expect(mkdir(damaged, 0o700) == 0)
            do {
                // A store with the real header but no `id_tokens` database.
                let source = try Environment.open(directory: store.directory, databases: names)
                let header = try source.read { txn in
                    try txn.withValue(in: source.database("meta")!, forKey: Array("header".utf8)) { Array($0) }
                }
                let target = try Environment.open(directory: damaged, databases: names.filter { $0 != "id_tokens" })
                try target.write { txn in
                    try #require(header).withUnsafeBytes { try txn.put(in: target.database("meta")!, key: Array("header".utf8), value: $0) }
                }
            }
            let verbs: [[String]] = [
                ["inspect"], ["info"], ["verify"], ["accounts"],
                ["lookup", "--client-id", "c", "--account", "u.t", "--authority", "https://login.microsoftonline.com/t", "--scopes", "s"],
            ]
            for verb in verbs {
                let run = try store.run(verb + ["--store", damaged])
                expectCleanFailure(run, verb[0])
                #expect(run.status == 65 && run.stderr.contains("corruptStore"), "\(verb[0]): \(run.output)")
            }
            var readOnly = EnvironmentOptions()
            readOnly.readOnly = true
            #expect(throws: LMDBError.notFound) {
                _ = try Environment.open(directory: damaged, databases: names, options: readOnly)
            }
        }
    }
}

@Suite struct VerifyCommandTests {
    @Test func verifyExitsZeroWhenCleanAnd65WithTheDamagedRecordsFingerprint() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let clean = try store.run(["verify"])
            #expect(clean.status == 0 && clean.stdout.contains("17 records verified, 0 problems"), "\(clean.output)")
            let environment = try Environment.open(
                directory: store.directory, databases: ["meta", "accounts", "access_tokens", "refresh_tokens", "id_tokens", "app_metadata"]
            )
            let accounts = try #require(environment.database("accounts"))
            try environment.write { txn in
                var first: ([UInt8], [UInt8])? = nil
                try txn.forEach(in: accounts, prefix: []) { key, value in
                    first = (Array(key), Array(value))
                    return false
                }
                var (key, value) = try #require(first)
                value[value.count - 1] ^= 0x01
                try value.withUnsafeBytes { try txn.put(in: accounts, key: key, value: $0) }
            }
            let damaged = try store.run(["verify", "--json"])
            #expect(damaged.status == 65, "\(damaged.output)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(damaged.stdout.utf8)) as? [String: Any])
            let problems = try #require(json["problems"] as? [[String: Any]])
            #expect(problems.count == 1 && problems[0]["kind"] as? String == "Account" && (problems[0]["fingerprint"] as? String)?.count == 16)
            #expect(json["lone_tokens_under_entry_key"] as? Int == 0)  // every lone access token under its bucket prefix
        }
    }

    /// `verify --repair`: a backup first, the damaged record removed and named by fingerprint, the rest untouched,
    /// and `verify` clean afterwards; the backup is the store as it was, which the same key opens.
    @Test func repairBacksUpRemovesTheDamagedRecordAndLeavesAVerifiedStore() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            #expect(try store.run(["verify", "--repair"]).stdout.hasPrefix("Nothing to repair.\n17 records verified, 0 problems.\ndata keys: 1 (active, aes-256-gcm) 17 records\n"))
            #expect(try store.run(["verify", "--backup-dir", store.root + "/b"]).status == 64)
            let environment = try Environment.open(
                directory: store.directory, databases: ["meta", "accounts", "access_tokens", "refresh_tokens", "id_tokens", "app_metadata"]
            )
            let refreshTokens = try #require(environment.database("refresh_tokens"))
            try environment.write { txn in
                var first: ([UInt8], [UInt8])? = nil
                try txn.forEach(in: refreshTokens, prefix: []) { key, value in
                    first = (Array(key), Array(value))
                    return false
                }
                var (key, value) = try #require(first)
                value[value.count - 1] ^= 0x01
                try value.withUnsafeBytes { try txn.put(in: refreshTokens, key: key, value: $0) }
            }
            let found = try store.run(["verify"])
            #expect(found.status == 65 && found.stdout.contains("Run `cachetool verify --repair`"), "\(found.output)")
            let fingerprint = try #require(found.stdout.split(separator: "\n").first { $0.hasPrefix("corrupt RefreshToken record ") }?.split(separator: " ")[3].dropLast())

            let backup = store.root + "/before-repair"
            let repaired = try store.run(["verify", "--repair", "--backup-dir", backup, "--json"])
            #expect(repaired.status == 0, "\(repaired.output)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(repaired.stdout.utf8)) as? [String: Any])
            let repair = try #require(json["repair"] as? [String: Any])
            let changes = try #require(repair["changes"] as? [[String: Any]])
            #expect(repair["backup"] as? String == backup && changes.count == 1)
            #expect(changes.first?["fingerprint"] as? String == String(fingerprint) && changes.first?["action"] as? String == "removed")
            #expect((json["problems"] as? [Any])?.isEmpty == true)
            #expect(try store.run(["verify"]).stdout.contains("16 records verified, 0 problems"))
            let copy = try store.run(["verify"], extra: ["TOKEN_CACHE_DIR": backup])
            #expect(copy.status == 65 && copy.stdout.contains("16 records verified, 1 problem.") && copy.stdout.contains(String(fingerprint)), "\(copy.output)")

            // Without --backup-dir, the copy goes beside the store.
            let again = try store.run(["verify", "--repair"])
            #expect(again.status == 0 && again.stdout.hasPrefix("Nothing to repair."))
        }
    }

    /// A store that cannot be used at all: the error points at `quarantine`, which asks (or needs --yes), moves the
    /// store aside whole and leaves an empty store that works; a healthy store is refused.
    @Test func quarantineMovesADamagedStoreAsideAndLeavesAWorkingEmptyOne() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let healthy = try store.run(["quarantine", "--yes"])
            #expect(healthy.status == 1 && healthy.stderr.contains("nothing was moved"), "\(healthy.output)")

            try? FileManager.default.removeItem(atPath: store.directory + "/lock.mdb")
            try Data((0..<16_384).map { _ in UInt8.random(in: 0...255) }).write(to: URL(fileURLWithPath: store.directory + "/data.mdb"))
            chmod(store.directory + "/data.mdb", 0o600)
            let failed = try store.run(["inspect"])
            #expect(failed.status == 65 && failed.stderr.contains("`cachetool quarantine` moves it aside"), "\(failed.output)")
            #expect(try store.run(["quarantine"]).status == 64, "no terminal to ask on, no --yes")
            #expect(FileManager.default.fileExists(atPath: store.directory + "/data.mdb"))

            let moved = try store.run(["quarantine", "--yes", "--json"])
            #expect(moved.status == 0, "\(moved.output)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(moved.stdout.utf8)) as? [String: Any])
            let target = try #require(json["moved_to"] as? String)
            #expect(target.hasPrefix(store.directory + ".corrupt-") && json["damage"] is String)
            #expect(FileManager.default.fileExists(atPath: target + "/data.mdb"))
            let fresh = try store.run(["inspect", "--summary", "--json"])
            #expect(fresh.status == 0, "\(fresh.output)")
            #expect(try store.run(["verify"]).stdout.contains("0 records verified, 0 problems"))
        }
    }
}
