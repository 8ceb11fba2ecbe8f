import Foundation
import Testing
import TokenCache

/// What people type: scopes in either list spelling, an account by its username, argument values the library
/// rejects (exit 64, naming the option), and `--version`.
@Suite struct ArgumentValueTests {
    static let now = SilentFlowCLITests.now

    /// A token response for home account `uid.utid1` whose ID token names `username`.
    static func response(uid: String, username: String, scope: String? = "User.Read Mail.Read openid profile") -> String {
        SilentFlowCLITests.response(accessToken: "AT-\(uid)", refreshToken: "RT-\(uid)", uid: uid, username: username, scope: scope)
    }

    /// Ingests a response; without `responseScope` the response names no scope, so the stored target is the request's
    /// `scopes`.
    func ingest(_ store: CLIStore, uid: String, username: String, scopes: String = "User.Read Mail.Read", responseScope: String? = "User.Read Mail.Read openid profile")
        throws -> CacheToolRun
    {
        let file = store.root + "/response-\(uid).json"
        try Self.response(uid: uid, username: username, scope: responseScope).write(toFile: file, atomically: true, encoding: .utf8)
        return try store.run([
            "ingest", "--client-id", "client-1", "--authority", "https://login.microsoftonline.com/common", "--scopes", scopes,
            "--now", "\(Self.now)", file,
        ])
    }

    func lookup(_ store: CLIStore, account: String, scopes: String = "user.read", authority: String = "https://login.microsoftonline.com/utid1")
        throws -> (run: CacheToolRun, json: [String: Any])
    {
        let run = try store.run([
            "lookup", "--client-id", "client-1", "--account", account, "--authority", authority, "--scopes", scopes, "--json",
            "--now", "\(Self.now)",
        ])
        return (run, (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]) ?? [:])
    }

    /// An empty argument is a usage error (64), named, before anything is read or written.
    @Test func emptyArgumentsAreUsageErrors() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let authority = "https://login.microsoftonline.com/common"
            let cases: [([String], String)] = [
                (["import", ""], "the FILE argument (name an MSAL cache file, or '-' for standard input) is empty"),
                (["ingest", "--client-id", "", "--authority", authority, "--scopes", "s", "-"], "--client-id is empty"),
                (["ingest", "--client-id", "c", "--authority", " ", "--scopes", "s", "-"], "--authority is empty"),
                (["ingest", "--client-id", "c", "--authority", authority, "--scopes", "", "-"], "--scopes is empty"),
                (["ingest", "--client-id", "c", "--authority", authority, "--scopes", "s", ""], "RESPONSE-FILE argument (name a file, or '-' for standard input) is empty"),
                (["backup", "-o", ""], "--output is empty"),
                (["salvage", "-o", " "], "--output is empty"),
                (["rekey", "--new-key-file", ""], "--new-key-file is empty"),
                (["init", "--store", ""], "--store is empty"),
                (["info", "--key-file", ""], "--key-file is empty"),
                (["bench", "--dir", "", "--tokens", "10"], "--dir (name a directory"),
            ]
            let timeout = try CacheTool.run(["info"], environment: store.environment.merging(["TOKEN_CACHE_LOCK_TIMEOUT": "5x"]) { $1 })
            #expect(timeout.status == 64 && timeout.stderr.contains("TOKEN_CACHE_LOCK_TIMEOUT=5x is not a duration"), "\(timeout.output)")
            for good in ["5", "5s", "500ms", "0.5m"] {
                #expect(try CacheTool.run(["info"], environment: store.environment.merging(["TOKEN_CACHE_LOCK_TIMEOUT": good]) { $1 }).status == 0, "\(good)")
            }
            for (arguments, message) in cases {
                let run = try CacheTool.run(arguments, environment: store.environment, stdin: "{}")
                #expect(run.status == 64 && run.stderr.contains(message), "\(arguments): \(run.output)")
                #expect(!run.stderr.contains("NSCocoaErrorDomain"))
            }
        }
    }

    @Test(arguments: ["user.read mail.read", "user.read,mail.read", "user.read, mail.read", " ,user.read,,mail.read, "])
    func scopesAreSeparatedBySpacesOrCommas(scopes: String) throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            // The same spelling for the request that is stored (the response names no scope, so the request's are kept)
            // and for the lookup.
            let ingested = try ingest(store, uid: "uid1", username: "ada@contoso.example", scopes: scopes, responseScope: nil)
            #expect(ingested.status == 0, "\(ingested.output)")
            let (run, json) = try lookup(store, account: "uid1.utid1", scopes: scopes)
            #expect(run.status == 0, "\(run.output)")
            #expect(json["outcome"] as? String == "hit")
            // Two scopes stored as two, not as one "user.read,mail.read".
            let target = (json["access_token"] as? [String: Any])?["target"] as? String ?? ""
            #expect(target.split(separator: " ").map { $0.lowercased() }.sorted() == ["mail.read", "user.read"], "\(target)")
        }
    }

    @Test func anAccountIsFoundByItsUsernameInAnyCase() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try ingest(store, uid: "uid1", username: "ada@contoso.example").status == 0)
            #expect(try ingest(store, uid: "uid2", username: "grace@contoso.example").status == 0)
            for name in ["ada@contoso.example", "ADA@Contoso.Example"] {
                let (run, json) = try lookup(store, account: name)
                #expect(run.status == 0, "\(run.output)")
                #expect(json["outcome"] as? String == "hit", "\(name)")
                #expect((json["access_token"] as? [String: Any])?["home_account_id"] as? String == "uid1.utid1", "\(name)")
            }
            let grace = try lookup(store, account: "grace@contoso.example")
            #expect((grace.json["access_token"] as? [String: Any])?["home_account_id"] as? String == "uid2.utid1")
            // inspect and remove-account take the same names.
            let inspected = try store.run(["inspect", "--json", "--account", "Grace@contoso.example"])
            #expect(inspected.status == 0 && inspected.stdout.contains("uid2.utid1") && !inspected.stdout.contains("uid1.utid1"), "\(inspected.output)")
            let removed = try store.run(["remove-account", "--account", "ADA@contoso.example", "--all-clients", "--json"])
            #expect(removed.status == 0, "\(removed.output)")
            #expect(try lookup(store, account: "uid1.utid1").json["outcome"] as? String == "interaction_required")
            #expect(try lookup(store, account: "uid2.utid1").json["outcome"] as? String == "hit")
        }
    }

    @Test func aUsernameOfSeveralAccountsIsListedAndRefused() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try ingest(store, uid: "uid1", username: "shared@contoso.example").status == 0)
            #expect(try ingest(store, uid: "uid2", username: "Shared@Contoso.example").status == 0)
            let (run, _) = try lookup(store, account: "shared@contoso.example")
            #expect(run.status == 64 && run.stdout.isEmpty, "\(run.output)")
            #expect(run.stderr.contains("2 accounts have the username") && run.stderr.contains("uid1.utid1") && run.stderr.contains("uid2.utid1"))
            let removed = try store.run(["remove-account", "--account", "shared@contoso.example", "--all-clients"])
            #expect(removed.status == 64)
            #expect(try lookup(store, account: "uid1.utid1").json["outcome"] as? String == "hit")  // nothing removed
        }
    }

    @Test func anUnknownUsernameIsNotFound() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try ingest(store, uid: "uid1", username: "ada@contoso.example").status == 0)
            // `lookup` answers interaction_required instead (LookupOutcomeTests): to it, no account is an answer.
            let run = try store.run(["inspect", "--account", "nobody@contoso.example"])
            #expect(run.status == 66 && run.stderr.contains("no account in the store has the username"), "\(run.output)")
        }
    }

    @Test func argumentValuesTheLibraryRejectsAreUsageErrors() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let badAuthority = try lookup(store, account: "uid1.utid1", authority: "not a url")
            #expect(badAuthority.run.status == 64 && badAuthority.run.stderr.contains("--authority"), "\(badAuthority.run.output)")
            let reservedOnly = try lookup(store, account: "uid1.utid1", scopes: "openid profile")
            #expect(reservedOnly.run.status == 64 && reservedOnly.run.stderr.contains("--scopes"), "\(reservedOnly.run.output)")
            let file = store.root + "/r.json"
            try Self.response(uid: "uid1", username: "a@b.example").write(toFile: file, atomically: true, encoding: .utf8)
            let ingest = try store.run(["ingest", "--client-id", "c", "--authority", "ftp://nowhere", "--scopes", "a", file])
            #expect(ingest.status == 64 && ingest.stderr.contains("--authority"), "\(ingest.output)")
            // A malformed response is data, not usage: 65.
            try "{".write(toFile: file, atomically: true, encoding: .utf8)
            let malformed = try store.run(["ingest", "--client-id", "c", "--authority", "https://login.microsoftonline.com/common", "--scopes", "a", file])
            #expect(malformed.status == 65, "\(malformed.output)")
        }
    }

    /// On a terminal, `ingest` without a file says what it waits for; through a pipe it stays quiet. The terminal is
    /// a pseudo-terminal from util-linux `script`, fed the response and then Ctrl-D.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func ingestOnATerminalSaysWhatItWaitsFor() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let arguments = [
                CacheTool.binary.path, "ingest", "--client-id", "client-1", "--authority", "https://login.microsoftonline.com/common",
                "--scopes", "User.Read", "--now", "\(Self.now)",
            ]
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
            process.arguments = ["-qec", arguments.map { "'\($0)'" }.joined(separator: " "), "/dev/null"]
            process.environment = store.processEnvironment
            let input = Pipe(), output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = output
            try process.run()
            // Typed after the prompt: the line, then Ctrl-D at the start of an empty line (end of input on a terminal).
            Thread.sleep(forTimeInterval: 0.5)
            input.fileHandleForWriting.write(Data((Self.response(uid: "uid1", username: "ada@contoso.example") + "\n").utf8))
            Thread.sleep(forTimeInterval: 0.2)
            input.fileHandleForWriting.write(Data([0x04]))
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(text)")
            #expect(text.contains("paste the token response (JSON), then press Ctrl-D"), "\(text)")
            #expect(try lookup(store, account: "uid1.utid1").json["outcome"] as? String == "hit")
            // Through a pipe: no prompt.
            let file = try CacheTool.run(Array(arguments.dropFirst()), environment: store.environment, stdin: Self.response(uid: "uid2", username: "g@contoso.example"))
            #expect(file.status == 0 && !file.stderr.contains("paste"), "\(file.output)")
        }
    }

    /// A `--store` that names a regular file: the commands that read say so (not found, 66, with the reason), and
    /// `init` refuses it as a usage error (64) before it creates anything, not even the key file.
    @Test func aStorePathThatIsAFileIsNamedAsSuch() throws {
        try CLIStore.with { store in
            let file = store.root + "/not-a-directory"
            try "x".write(toFile: file, atomically: true, encoding: .utf8)
            let key = store.root + "/fresh-key"
            for verb in [["info"], ["inspect"], ["lookup", "--client-id", "c", "--account", "u.t", "--environment", "e", "--realm", "r", "--scopes", "s"]] {
                let run = try CacheTool.run(verb + ["--store", file, "--key-file", key])
                #expect(run.status == 66 && run.stderr.contains("is a file, not a store"), "\(verb): \(run.output)")
            }
            let initialized = try CacheTool.run(["init", "--store", file, "--key-file", key])
            #expect(initialized.status == 64 && initialized.stderr.contains("is a file, not a directory"), "\(initialized.output)")
            #expect(!FileManager.default.fileExists(atPath: key))
            #expect(try String(contentsOfFile: file, encoding: .utf8) == "x")
        }
    }

    @Test func versionNamesTheFormatAndTheCLibraries() throws {
        let run = try CacheTool.run(["--version"])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(run.stdout)")
        #expect(lines.first?.hasPrefix("cachetool ") == true)
        let versions = ComponentVersions.current
        #expect(lines.contains("store format \(versions.formatWriteVersion) (reads versions 1 to \(versions.formatReadVersion))"))
        #expect(lines.contains("liblmdb \(versions.lmdb)") && versions.lmdb.hasPrefix("0.9.") && !versions.lmdb.hasSuffix(":"))
        #expect(lines.contains("libsodium \(versions.sodium)") && versions.sodium.hasPrefix("1.0."))
    }
}
