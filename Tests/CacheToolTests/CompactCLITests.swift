import Foundation
import Testing
import TokenCache

#if canImport(Glibc)
import Glibc
#endif

/// `cachetool compact`: shrinks the store and keeps its records; refused with exit 75, naming the process, while the
/// store is open; and killed at any moment, it leaves a store that opens, verifies clean and holds every record.
@Suite(.serialized) struct CompactCLITests {
    /// `count` access tokens with 8 KiB secrets written in-process, then every other one deleted: a store whose data
    /// file has free pages for compaction to drop. The store is closed again when this returns.
    private static func populate(_ store: CLIStore, count: Int) throws {
        let cache = try TokenStore.open(store.configuration)
        let padding = String(repeating: "p", count: 8192)
        try cache.write { writer in
            for index in 0..<count {
                try writer.put(AccessToken(
                    homeAccountID: "u.t", environment: "login.microsoftonline.com", clientID: "c", realm: "t", target: "s\(index)",
                    secret: Secret("AT-\(index)-\(padding)"), cachedAt: 1_700_000_000, expiresOn: 1_900_000_000
                ))
            }
        }
        try cache.write { writer in
            for index in stride(from: 0, to: count, by: 2) {
                try writer.delete(AccessToken.Key(
                    homeAccountID: "u.t", environment: "login.microsoftonline.com", clientID: "c", realm: "t", target: "s\(index)"
                ))
            }
        }
    }

    /// Every access token's secret, read in-process (and closed again at return).
    private static func secrets(_ store: CLIStore) throws -> [String] {
        var configuration = store.configuration
        configuration.readOnly = true
        return try TokenStore.open(configuration).list(AccessToken.self).records.map { $0.entity.secret.reveal() }.sorted()
    }

    /// `cachetool compact` started in the background, its output discarded.
    private static func startCompact(_ store: CLIStore) throws -> Process {
        let process = Process()
        process.executableURL = CacheTool.binary
        process.arguments = ["compact"]
        process.environment = store.processEnvironment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    private static func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? -1
    }

    @Test func compactShrinksTheStoreAndKeepsEveryRecord() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            try Self.populate(store, count: 400)
            let before = try Self.secrets(store)
            let inspectBefore = try store.run(["inspect", "--json", "--reveal-secrets", "--now", "1800000000"]).stdout
            let run = try store.run(["compact", "--json"])
            #expect(run.status == 0, "\(run.output)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            let sizeBefore = try #require(json["size_before"] as? Int), sizeAfter = try #require(json["size_after"] as? Int)
            #expect(sizeAfter == Self.size(store.directory + "/data.mdb"))
            #expect(sizeAfter * 3 / 2 < sizeBefore, "\(sizeBefore) → \(sizeAfter)")
            #expect((json["records"] as? [String: Int])?["AccessToken"] == 200)
            #expect(try store.mode(store.directory + "/data.mdb") == 0o600)
            #expect(try store.run(["verify"]).status == 0)
            #expect(try Self.secrets(store) == before)
            #expect(try store.run(["inspect", "--json", "--reveal-secrets", "--now", "1800000000"]).stdout == inspectBefore)
        }
    }

    @Test func refusedWith75WhileAnotherProcessHasTheStoreOpenNamingIt() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            try Self.populate(store, count: 40)
            let sizeBefore = Self.size(store.directory + "/data.mdb")
            do {
                // This test process holds the store open, as an app would: compaction must name it.
                let holder = try TokenStore.open(store.configuration)
                let refused = try store.run(["compact"])
                #expect(refused.status == 75, "\(refused.output)")
                #expect(refused.stderr.contains("storeInUse: the store at \(store.directory) is open in process \(getpid()) ("), "\(refused.stderr)")
                let ownName = URL(fileURLWithPath: CommandLine.arguments[0]).lastPathComponent
                #expect(refused.stderr.contains(ownName), "the message names the command to stop: \(refused.stderr)")
                #expect(Self.size(store.directory + "/data.mdb") == sizeBefore)
                #expect(!FileManager.default.fileExists(atPath: store.directory + "/data.mdb.compacting"))
                #expect(try holder.list(AccessToken.self).records.count == 20)
            }
            let run = try store.run(["compact"])
            #expect(run.status == 0, "once the holder closed the store: \(run.output)")
        }
    }

    /// A writer that starts while compaction runs waits for it, then writes into the compacted store: its write is
    /// neither refused nor lost in the old file.
    @Test(.timeLimit(.minutes(2))) func aWriterStartingDuringCompactionWaitsAndItsWriteIsKept() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            try Self.populate(store, count: 2000)
            let partial = store.directory + "/data.mdb.compacting"
            var caught = false
            for _ in 0..<10 where !caught {
                let compact = try Self.startCompact(store)
                let deadline = Date().addingTimeInterval(10)
                while !FileManager.default.fileExists(atPath: partial), compact.isRunning, Date() < deadline { usleep(100) }
                caught = FileManager.default.fileExists(atPath: partial) && compact.isRunning
                let clientInfo = Data(#"{"uid":"w","utid":"t"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
                let response = #"{"access_token":"AT-DURING","token_type":"Bearer","expires_in":86400,"scope":"during","client_info":"\#(clientInfo)"}"#
                let ingest = try CacheTool.run(
                    ["ingest", "--client-id", "c", "--authority", "https://login.microsoftonline.com/t", "--scopes", "during", "-"],
                    environment: store.environment, stdin: response
                )
                compact.waitUntilExit()
                #expect(ingest.status == 0, "\(ingest.output)")
                #expect(compact.terminationStatus == 0)
            }
            #expect(caught, "the writer never started while the compacted copy was being written")
            let secrets = try Self.secrets(store)
            #expect(secrets.contains("AT-DURING"))
            #expect(secrets.count == 1001)
        }
    }

    /// SIGKILL at random moments, half of them aimed at the copy (as soon as the temporary file appears): the store
    /// must open, verify clean and hold every record after each kill; a kill before the swap leaves the old file and a
    /// temporary one, which the next compaction removes; after the swap, the compacted file.
    @Test(.timeLimit(.minutes(3))) func killedAtAnyMomentTheStoreOpensVerifiesAndKeepsEveryRecord() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            try Self.populate(store, count: 2000)
            let expected = try Self.secrets(store)
            let dataPath = store.directory + "/data.mdb", partial = store.directory + "/data.mdb.compacting"
            var generator = SystemRandomNumberGenerator()
            var killedDuringCopy = 0, killedAfterSwap = 0, leftoversRemoved = 0
            for round in 0..<24 {
                let inodeBefore = try FileManager.default.attributesOfItem(atPath: dataPath)[.systemFileNumber] as? Int
                let leftoverBefore = FileManager.default.fileExists(atPath: partial)
                let process = try Self.startCompact(store)
                if round % 2 == 0 {
                    let deadline = Date().addingTimeInterval(10)
                    while !FileManager.default.fileExists(atPath: partial) || leftoverBefore, process.isRunning, Date() < deadline {
                        if leftoverBefore, !FileManager.default.fileExists(atPath: partial) { break }  // the old one went
                        usleep(100)
                    }
                    usleep(UInt32.random(in: 0...3_000, using: &generator))
                } else {
                    usleep(UInt32.random(in: 0...250_000, using: &generator))
                }
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()

                let inodeAfter = try FileManager.default.attributesOfItem(atPath: dataPath)[.systemFileNumber] as? Int
                if inodeAfter != inodeBefore { killedAfterSwap += 1 }
                if FileManager.default.fileExists(atPath: partial) {
                    killedDuringCopy += 1
                    #expect(inodeAfter == inodeBefore, "round \(round): the temporary file outlived the swap")
                } else if leftoverBefore {
                    leftoversRemoved += 1
                }
                let verify = try store.run(["verify"])
                #expect(verify.status == 0, "round \(round): \(verify.output)")
                #expect(try Self.secrets(store) == expected, "round \(round): records changed")
            }
            let final = try store.run(["compact"])
            #expect(final.status == 0, "\(final.output)")
            #expect(!FileManager.default.fileExists(atPath: partial))
            #expect(try Self.secrets(store) == expected)
            #expect(killedDuringCopy > 0, "no kill landed while the copy was being written")
            #expect(killedAfterSwap > 0, "no compaction got as far as the swap")
            print("compact kills: \(killedDuringCopy) during the copy, \(killedAfterSwap) after the swap, \(leftoversRemoved) leftovers removed")
        }
    }
}
