import Foundation
import Testing
import TokenCache

#if canImport(Glibc)
import Glibc
#endif

/// `cachetool backup`: the copy is a store the same key opens, with the same records; it is one snapshot even while
/// other processes write; destinations it must not write into are refused with exit 64.
@Suite struct BackupCLITests {
    /// A copy nested in the live store would be copied into every later backup, and removed with the store.
    @Test func aDestinationInsideTheStoreIsRefusedBeforeAnythingIsWritten() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let before = try FileManager.default.contentsOfDirectory(atPath: store.directory).sorted()
            try FileManager.default.createSymbolicLink(atPath: store.root + "/link", withDestinationPath: store.directory)
            for destination in [store.directory + "/sub", store.directory + "/a/b", store.root + "/link/sub", store.directory + "/./c/../d"] {
                let backup = try store.run(["backup", "-o", destination])
                #expect(backup.status == 64 && backup.stderr.contains("inside the store"), "\(destination): \(backup.output)")
                let repair = try store.run(["verify", "--repair", "--backup-dir", destination])
                #expect(repair.status == 64 && repair.stderr.contains("inside the store"), "\(destination): \(repair.output)")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory).sorted() == before)
            // Beside the store is fine.
            #expect(try store.run(["backup", "-o", store.root + "/store-copy"]).status == 0)
        }
    }

    @Test func theCopyVerifiesCleanAndShowsTheSameRecords() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data"]).status == 0)
            let copy = store.root + "/backups/today"
            let run = try store.run(["backup", "-o", copy, "--json"], shell: "umask 000")
            #expect(run.status == 0, "\(run.output)")
            let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
            #expect(json["directory"] as? String == copy)
            #expect(json["bytes"] as? Int == (try FileManager.default.attributesOfItem(atPath: copy + "/data.mdb")[.size] as? Int))
            #expect((json["records"] as? [String: Int])?.values.reduce(0, +) == 17)

            // Owner-only whatever the umask: the directory made for the copy, its parent, and every file in it.
            #expect(try store.mode(copy) == 0o700)
            #expect(try store.mode(store.root + "/backups") == 0o700)
            for name in try FileManager.default.contentsOfDirectory(atPath: copy) {
                #expect(try store.mode(copy + "/" + name) == 0o600, "\(name)")
            }

            let verify = try store.run(["verify", "--store", copy])
            #expect(verify.status == 0 && verify.stdout.contains("17 records verified, 0 problems."), "\(verify.output)")
            let original = try store.run(["inspect", "--json", "--reveal-secrets", "--now", "1800000000"])
            let copied = try store.run(["inspect", "--json", "--reveal-secrets", "--now", "1800000000", "--store", copy])
            #expect(original.status == 0 && copied.status == 0)
            #expect(original.stdout.contains("\"secret\""), "the comparison must include the secrets")
            #expect(
                copied.stdout.replacingOccurrences(of: copy, with: store.directory) == original.stdout,
                "first difference: \(HelpTests.firstDifference(copied.stdout, original.stdout))"
            )
        }
    }

    @Test func destinationsABackupMustNotGoIntoExitWith64() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let first = store.root + "/first"
            #expect(try store.run(["backup", "-o", first]).status == 0)
            let again = try store.run(["backup", "-o", first])
            #expect(again.status == 64 && again.stderr.contains("already holds a store"), "\(again.output)")
            let itself = try store.run(["backup", "-o", store.directory])
            #expect(itself.status == 64 && itself.stderr.contains("is the store itself"), "\(itself.output)")
            let file = try store.run(["backup", "-o", store.keyFile])
            #expect(file.status == 64 && file.stderr.contains("not a directory"), "\(file.output)")
            let busy = store.root + "/busy"
            try FileManager.default.createDirectory(atPath: busy, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            try Data("keep".utf8).write(to: URL(fileURLWithPath: busy + "/notes.txt"))
            let notEmpty = try store.run(["backup", "-o", busy])
            #expect(notEmpty.status == 64 && notEmpty.stderr.contains("not empty"), "\(notEmpty.output)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: busy) == ["notes.txt"])

            let missing = try store.run(["backup", "-o", store.root + "/x"], extra: ["TOKEN_CACHE_DIR": store.root + "/nothing"])
            #expect(missing.status == 66, "\(missing.output)")
            #expect(!FileManager.default.fileExists(atPath: store.root + "/x"))
            let usage = try store.run(["backup"])
            #expect(usage.status == 64 && usage.stderr.contains("--output"), "\(usage.output)")
        }
    }

    /// Four processes ingest numbered token responses, one after another each, while backups are taken. Each writer's
    /// writes commit in order, so a snapshot that holds a writer's item n holds all of its items before n: a copy that
    /// does not is not one snapshot. Every copy must also open and verify clean.
    @Test(.timeLimit(.minutes(3))) func backupsWhileFourProcessesWriteAreConsistentSnapshots() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let writers = 4, items = 40
            let script = #"""
                w=$1; info=$2; n=$3; i=1
                while [ $i -le $n ]; do
                  printf '{"access_token":"AT-%s-%s","token_type":"Bearer","expires_in":86400,"scope":"s%s","refresh_token":"RT-%s-%s","client_info":"%s"}' \
                    "$w" "$i" "$i" "$w" "$i" "$info" \
                    | "$TOOL" ingest --client-id c --authority https://login.microsoftonline.com/t --scopes "s$i" - >/dev/null || exit 1
                  i=$((i + 1))
                done
                """#
            let processes = try (1...writers).map { writer in
                let clientInfo = Data(#"{"uid":"u\#(writer)","utid":"t"}"#.utf8).base64EncodedString()
                    .replacingOccurrences(of: "=", with: "")
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/bin/sh")
                process.arguments = ["-c", script, "writer", "\(writer)", clientInfo, "\(items)"]
                process.environment = store.processEnvironment.merging(["TOOL": CacheTool.binary.path]) { $1 }
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                return process
            }
            defer { for process in processes where process.isRunning { kill(process.processIdentifier, SIGKILL) } }

            var copies: [String] = []
            while processes.contains(where: \.isRunning) || copies.count < 3, copies.count < 12 {
                let copy = store.root + "/copy\(copies.count)"
                let run = try store.run(["backup", "-o", copy])
                try #require(run.status == 0, "\(run.output)")
                copies.append(copy)
                usleep(150_000)
            }
            for process in processes {
                process.waitUntilExit()
                #expect(process.terminationStatus == 0, "a writer failed")
            }
            let final = store.root + "/final"
            #expect(try store.run(["backup", "-o", final]).status == 0)

            var takenWhileWriting = 0
            for copy in copies + [final] {
                let verify = try store.run(["verify", "--store", copy])
                #expect(verify.status == 0, "\(copy): \(verify.output)")
                let dump = try store.run(["inspect", "--json", "--reveal-secrets", "--now", "1800000000", "--store", copy])
                try #require(dump.status == 0, "\(copy): \(dump.output)")
                let present = Self.accessTokens(in: dump.stdout)
                var partial = false
                for writer in 1...writers {
                    let numbers = present[writer, default: []]
                    #expect(numbers == Set((0..<numbers.count).map { $0 + 1 }), "\(copy): writer \(writer)'s items \(numbers.sorted()) have a gap: not one snapshot")
                    if numbers.count < items { partial = true }
                }
                if partial, copy != final { takenWhileWriting += 1 }
                if copy == final {
                    #expect((1...writers).allSatisfy { present[$0]?.count == items }, "the final copy lacks acknowledged writes")
                }
            }
            #expect(takenWhileWriting > 0, "no backup was taken while the writers were writing")
        }
    }

    /// `AT-<writer>-<item>` secrets in an `inspect --json --reveal-secrets` output, by writer.
    private static func accessTokens(in json: String) -> [Int: Set<Int>] {
        var result: [Int: Set<Int>] = [:]
        let pattern = try! NSRegularExpression(pattern: #""AT-(\d+)-(\d+)""#)
        for match in pattern.matches(in: json, range: NSRange(json.startIndex..., in: json)) {
            guard let writer = Range(match.range(at: 1), in: json).flatMap({ Int(json[$0]) }),
                  let item = Range(match.range(at: 2), in: json).flatMap({ Int(json[$0]) })
            else { continue }
            result[writer, default: []].insert(item)
        }
        return result
    }
}
