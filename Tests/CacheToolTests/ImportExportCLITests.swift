import Foundation
import TestSupport
import Testing
import TokenCache

/// `cachetool import` and `export`, through the built binary: what a user migrating a cache sees.
@Suite struct ImportExportCLITests {
    static func accessToken(secret: String, homeAccountID: String = "uid.utid", target: String = "User.Read") -> String {
        """
        {"AccessToken": {"k": {"home_account_id": "\(homeAccountID)", "environment": "login.microsoftonline.com", \
        "client_id": "client-1", "realm": "tenant-1", "target": "\(target)", "secret": "\(secret)", "cached_at": "100", \
        "expires_on": "1900000000", "credential_type": "AccessToken"}}}
        """
    }

    static func json(_ run: CacheToolRun) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    @Test func aCacheImportsFromAFileAndFromStandardInputAndExportsBack() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let imported = try store.run(["import", MSALFixtures.url("python-1.39.json").path, "--json"])
            #expect(imported.status == 0, "\(imported.output)")
            let report = Self.json(imported)
            #expect(Set(report.keys) == [
                "entries", "written", "kept_existing", "merged_in_file", "access_tokens_superseded", "removed_by_replace", "kept_sections", "rejected",
                "source", "verified", "shredded", "kept_because",
            ])
            #expect(report["entries"] as? Int == 14 && (report["written"] as? [String: Int])?["AccessToken"] == 5)
            #expect(imported.stderr == "")

            let piped = try CacheTool.run(["import", "-"], environment: store.environment, stdin: Self.accessToken(secret: "PIPED-CANARY-1"))
            #expect(piped.status == 0 && piped.stdout.hasPrefix("Imported 1 of 1 entries"), "\(piped.output)")

            let exported = try store.run(["export", "--include-secrets", "-o", store.root + "/out.json"])
            #expect(exported.status == 0, "\(exported.output)")
            #expect(try store.mode(store.root + "/out.json") == 0o600)
            let document = try String(contentsOfFile: store.root + "/out.json", encoding: .utf8)
            #expect(document.contains("PIPED-CANARY-1"))

            // Into a second store, and out again: the same document.
            let second = CLIStore(root: store.root + "/second")
            try FileManager.default.createDirectory(atPath: second.root, withIntermediateDirectories: true)
            #expect(try second.run(["init"]).status == 0)
            #expect(try second.run(["import", store.root + "/out.json"]).status == 0)
            #expect(try second.run(["export", "--include-secrets", "-o", second.root + "/out.json"]).status == 0)
            #expect(try String(contentsOfFile: second.root + "/out.json", encoding: .utf8) == document)
        }
    }

    @Test func exportRedactsUnlessAskedAndSaysSo() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try CacheTool.run(["import"], environment: store.environment, stdin: Self.accessToken(secret: "EXPORT-CANARY-2")).status == 0)
            let redacted = try store.run(["export"])
            #expect(redacted.status == 0)
            #expect(!redacted.stdout.contains("EXPORT-CANARY-2") && redacted.stdout.contains("<redacted>"))
            #expect(redacted.stdout.hasSuffix("}\n") && !redacted.stdout.hasSuffix("\n\n"))
            #expect((try? JSONSerialization.jsonObject(with: Data(redacted.stdout.utf8))) != nil)
            #expect(redacted.stderr.contains("secrets are redacted"))
            let revealed = try store.run(["export", "--include-secrets"])
            #expect(revealed.status == 0 && revealed.stdout.contains("EXPORT-CANARY-2") && !revealed.stderr.contains("redacted"))
        }
    }

    @Test func exportRefusesAFileOthersCanRead() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let path = store.root + "/loose.json"
            _ = FileManager.default.createFile(atPath: path, contents: Data("old".utf8), attributes: [.posixPermissions: 0o644])
            let run = try store.run(["export", "--include-secrets", "-o", path])
            #expect(run.status == 64, "\(run.output)")
            #expect(run.stderr.contains("mode 644"))
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "old")
            // `> file` makes a file with the shell's umask: tokens are not written into one others can read.
            let redirected = try store.run(["export", "--include-secrets"], shell: "umask 022; exec > \(store.root)/redirected.json")
            #expect(redirected.status == 64, "\(redirected.output)")
            #expect(redirected.stderr.contains("others can read"))
            #expect(try String(contentsOfFile: store.root + "/redirected.json", encoding: .utf8).isEmpty)
            // Written with -o, the file exists only complete and 0600, and no temporary file is left.
            #expect(try store.run(["export", "--include-secrets", "-o", store.root + "/private.json"]).status == 0)
            #expect(try store.mode(store.root + "/private.json") == 0o600)
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.root).filter { $0.hasSuffix(".tmp") }.isEmpty)
        }
    }

    @Test func anInvalidFileImportsNothingAndNamesTheEntryWithoutItsSecret() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let bad = Self.accessToken(secret: "BAD-CANARY-3").replacingOccurrences(of: "\"expires_on\": \"1900000000\", ", with: "")
            let run = try CacheTool.run(["import", "-"], environment: store.environment, stdin: bad)
            #expect(run.status == 65, "\(run.output)")
            #expect(run.stderr.contains("section \"AccessToken\"") && run.stderr.contains("expires_on"))
            #expect(!run.output.contains("BAD-CANARY-3") && !run.output.contains("uid.utid"))
            let skipped = try CacheTool.run(["import", "-", "--skip-invalid", "--json"], environment: store.environment, stdin: bad)
            #expect(skipped.status == 0)
            let rejected = try #require(Self.json(skipped)["rejected"] as? [[String: Any]])
            #expect(rejected.count == 1 && rejected.first?["field"] as? String == "expires_on")
            #expect((rejected.first?["fingerprint"] as? String)?.count == 16)
            #expect(skipped.stderr.contains("1 invalid entry was not imported"))
            #expect(!skipped.output.contains("BAD-CANARY-3"))
        }
    }
}
