import Foundation
import Testing
import TokenCache

#if canImport(Glibc)
import Glibc
#endif

/// `cachetool import --discover`, `--from` and `--shred-source`: adopting the plaintext caches Azure CLI and the
/// Azure Identity libraries leave under a home directory, here a temporary one holding fabricated caches.
@Suite struct AdoptPlaintextCacheTests {
    /// A home directory for the child, beside the store.
    struct Home {
        let store: CLIStore
        var path: String { store.root + "/home" }
        var azureCLI: String { path + "/.azure/msal_token_cache.json" }
        var identityService: String { path + "/.IdentityService" }
        var environment: [String: String] { ["HOME": path] }

        func write(_ text: String, to file: String, mode: Int = 0o600, modified: Date? = nil) throws {
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: file, contents: Data(text.utf8), attributes: [.posixPermissions: mode]))
            if let modified { try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: file) }
        }

        func run(_ arguments: [String], extra: [String: String] = [:]) throws -> CacheToolRun {
            try store.run(arguments, extra: environment.merging(extra) { $1 })
        }

        static func with(_ body: (Home) throws -> Void) throws {
            try CLIStore.with { store in
                let home = Home(store: store)
                try FileManager.default.createDirectory(atPath: home.path, withIntermediateDirectories: true)
                try body(home)
            }
        }
    }

    /// An MSAL cache as Azure CLI writes it: an account, its refresh token, an ID token and `accessTokens` access
    /// tokens (scopes `scope0`, `scope1`, …), with the given secrets.
    static func cache(
        account: String = "uid.utid", refreshToken: String, refreshWritten: String = "100", accessTokens: [(secret: String, target: String, cachedAt: String)],
        idToken: String? = nil, invalid: Bool = false
    ) -> String {
        let common = "\"home_account_id\": \"\(account)\", \"environment\": \"login.microsoftonline.com\""
        let client = "\"client_id\": \"04b07795-8ddb-461a-bbee-02f9e1bf7b46\""
        let ats = accessTokens.enumerated().map { index, token in
            "\"at\(index)\": {\(common), \(client), \"realm\": \"tenant-1\", \"target\": \"\(token.target)\", \"secret\": \"\(token.secret)\", "
                + "\"cached_at\": \"\(token.cachedAt)\", " + (invalid && index == 0 ? "" : "\"expires_on\": \"1900000000\", ")
                + "\"credential_type\": \"AccessToken\"}"
        }
        var sections = [
            "\"AccessToken\": {\(ats.joined(separator: ", "))}",
            "\"RefreshToken\": {\"rt\": {\(common), \(client), \"secret\": \"\(refreshToken)\", \"credential_type\": \"RefreshToken\", "
                + "\"last_modification_time\": \"\(refreshWritten)\"}}",
            "\"Account\": {\"acc\": {\(common), \"realm\": \"tenant-1\", \"local_account_id\": \"uid\", \"username\": \"user@example.com\", "
                + "\"authority_type\": \"MSSTS\"}}",
        ]
        if let idToken {
            sections.append("\"IdToken\": {\"idt\": {\(common), \(client), \"realm\": \"tenant-1\", \"secret\": \"\(idToken)\", \"credential_type\": \"IdToken\"}}")
        }
        return "{" + sections.joined(separator: ",\n") + "}"
    }

    static func json(_ run: CacheToolRun) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]) ?? [:]
    }

    /// The store's export with secrets, to see what it holds.
    static func exported(_ home: Home) throws -> String {
        let path = home.store.root + "/export.json"
        try? FileManager.default.removeItem(atPath: path)
        let run = try home.store.run(["export", "--include-secrets", "-o", path])
        #expect(run.status == 0, "\(run.output)")
        return try String(contentsOfFile: path, encoding: .utf8)
    }

    static func expectNoCanary(_ run: CacheToolRun, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!run.output.contains("CANARY"), "a secret reached the output", sourceLocation: sourceLocation)
    }

    @Test func discoverListsBothKindsWithTheirCountsAndABrokenFileWithItsProblem() throws {
        try Home.with { home in
            let configDir = home.store.root + "/az-config"
            let modified = Date(timeIntervalSince1970: 1_700_000_000)
            try home.write(
                Self.cache(refreshToken: "CANARY-RT-1", accessTokens: [("CANARY-AT-1", "a", "100"), ("CANARY-AT-2", "b", "100")], idToken: "CANARY-ID-1"),
                to: home.azureCLI, mode: 0o644, modified: modified)
            try home.write(
                Self.cache(account: "other.utid", refreshToken: "CANARY-RT-2", accessTokens: [("CANARY-AT-3", "c", "100")]),
                to: configDir + "/msal_token_cache.json")
            try home.write(
                Self.cache(refreshToken: "CANARY-RT-3", accessTokens: [("CANARY-AT-4", "d", "100")], invalid: true),
                to: home.identityService + "/msal.cache.nocae")
            try home.write("{\"AccessToken\": {\"x\": {\"secret\": \"CANARY-AT-5\"", to: home.identityService + "/msal.cache.cae")
            try home.write("", to: home.identityService + "/msal.cache")
            try home.write("", to: home.identityService + "/msal.cache.lockfile")
            try home.write("{}", to: home.identityService + "/unrelated.json")

            let run = try home.run(["import", "--discover", "--json"], extra: ["AZURE_CONFIG_DIR": configDir])
            #expect(run.status == 0, "\(run.output)")
            Self.expectNoCanary(run)
            let caches = try #require(Self.json(run)["caches"] as? [[String: Any]])
            let byPath = Dictionary(uniqueKeysWithValues: caches.map { ($0["path"] as? String ?? "", $0) })
            #expect(caches.map { $0["path"] as? String ?? "" } == [
                configDir + "/msal_token_cache.json", home.azureCLI, home.identityService + "/msal.cache",
                home.identityService + "/msal.cache.cae", home.identityService + "/msal.cache.nocae",
            ])

            let cli = try #require(byPath[home.azureCLI])
            #expect(cli["tool"] as? String == "azure-cli" && cli["accounts"] as? Int == 1 && cli["tokens"] as? Int == 4)
            #expect((cli["entries"] as? [String: Int]) == ["AccessToken": 2, "RefreshToken": 1, "IdToken": 1, "Account": 1, "AppMetadata": 0])
            #expect(cli["mode"] as? String == "0644" && cli["modified"] as? String == "2023-11-14T22:13:20Z")
            #expect(cli["size"] as? Int == (try FileManager.default.attributesOfItem(atPath: home.azureCLI)[.size] as? Int))
            #expect(cli["problem"] is NSNull && cli["invalid_entries"] as? Int == 0)
            #expect(byPath[configDir + "/msal_token_cache.json"]?["tokens"] as? Int == 2)

            let nocae = try #require(byPath[home.identityService + "/msal.cache.nocae"])
            #expect(nocae["tool"] as? String == "azure-identity" && nocae["tokens"] as? Int == 2 && nocae["invalid_entries"] as? Int == 1)
            #expect((nocae["problem"] as? String)?.contains("1 invalid entry") == true)
            let broken = try #require(byPath[home.identityService + "/msal.cache.cae"])
            #expect(broken["accounts"] is NSNull && broken["tokens"] is NSNull)
            #expect((broken["problem"] as? String)?.contains("unexpected end of input") == true)
            #expect((byPath[home.identityService + "/msal.cache"]?["problem"] as? String)?.hasPrefix("empty") == true)

            // The table says the same, and nothing was imported: no store was created.
            let text = try home.run(["import", "--discover"], extra: ["AZURE_CONFIG_DIR": configDir])
            #expect(text.status == 0, "\(text.output)")
            Self.expectNoCanary(text)
            #expect(text.stdout.contains(home.azureCLI) && text.stdout.contains("unexpected end of input"))
            #expect(text.stderr.contains("can be read by other users (mode 0644)"))
            #expect(!FileManager.default.fileExists(atPath: home.store.directory))
        }
    }

    @Test func discoverWithNothingFoundSaysWhereItLooked() throws {
        try Home.with { home in
            let run = try home.run(["import", "--discover"])
            #expect(run.status == 0 && run.stdout.contains("No plaintext MSAL cache found"), "\(run.output)")
            #expect(run.stdout.contains(home.azureCLI))
        }
    }

    @Test func fromImportsTheOneCacheFoundAndRefusesToGuess() throws {
        try Home.with { home in
            #expect(try home.store.run(["init"]).status == 0)
            let none = try home.run(["import", "--from", "azure-cli"])
            #expect(none.status == 66 && none.stderr.contains("no Azure CLI cache"), "\(none.output)")

            try home.write(Self.cache(refreshToken: "CANARY-RT-1", accessTokens: [("CANARY-AT-1", "a", "100")]), to: home.azureCLI)
            let run = try home.run(["import", "--from", "azure-cli", "--json"])
            #expect(run.status == 0, "\(run.output)")
            Self.expectNoCanary(run)
            let report = Self.json(run)
            #expect(report["entries"] as? Int == 3 && report["source"] as? String == home.azureCLI)
            #expect(report["shredded"] as? Bool == false && report["verified"] is NSNull)
            #expect(FileManager.default.fileExists(atPath: home.azureCLI))
            #expect(try Self.exported(home).contains("CANARY-AT-1"))

            // Azure Identity: an empty signal file does not count, two caches with content do.
            try home.write("", to: home.identityService + "/msal.cache")
            try home.write(Self.cache(refreshToken: "CANARY-RT-2", accessTokens: [("CANARY-AT-2", "b", "100")]), to: home.identityService + "/msal.cache.nocae")
            let one = try home.run(["import", "--from", "azure-identity"])
            #expect(one.status == 0 && one.stderr.contains("msal.cache.nocae"), "\(one.output)")
            #expect(try Self.exported(home).contains("CANARY-AT-2"))
            try home.write(Self.cache(refreshToken: "CANARY-RT-3", accessTokens: [("CANARY-AT-3", "c", "100")]), to: home.identityService + "/msal.cache.cae")
            let several = try home.run(["import", "--from", "azure-identity"])
            #expect(several.status == 64, "\(several.output)")
            #expect(several.stderr.contains("msal.cache.cae") && several.stderr.contains("msal.cache.nocae") && several.stderr.contains("FILE"))
            #expect(!(try Self.exported(home)).contains("CANARY-AT-3"))
        }
    }

    @Test func shredSourceRemovesTheFileOnlyAfterAVerifiedImport() throws {
        try Home.with { home in
            #expect(try home.store.run(["init"]).status == 0)
            let document = Self.cache(refreshToken: "CANARY-RT-1", accessTokens: [("CANARY-AT-1", "a", "100")], idToken: "CANARY-ID-1")
            try home.write(document, to: home.azureCLI)
            let run = try home.run(["import", "--from", "azure-cli", "--shred-source", "--json"])
            #expect(run.status == 0, "\(run.output)")
            Self.expectNoCanary(run)
            let report = Self.json(run)
            #expect(report["shredded"] as? Bool == true && report["source"] as? String == home.azureCLI && report["kept_because"] is NSNull)
            let verified = try #require(report["verified"] as? [String: Any])
            #expect(verified["identical"] as? Int == 4 && verified["superseded"] as? Int == 0 && (verified["unverified"] as? [Any])?.isEmpty == true)
            #expect(!FileManager.default.fileExists(atPath: home.azureCLI))
            for warning in ["btrfs", "ZFS", "data=journal", "SSDs", "copies", "revoke", "az logout"] {
                #expect(run.stderr.contains(warning), "the caveat lacks \(warning)")
            }
            let stored = try Self.exported(home)
            #expect(stored.contains("CANARY-RT-1") && stored.contains("CANARY-AT-1") && stored.contains("CANARY-ID-1"))

            // A file given by name, in text mode.
            let file = home.store.root + "/copy.json"
            try home.write(Self.cache(refreshToken: "CANARY-RT-2", refreshWritten: "200", accessTokens: [("CANARY-AT-2", "b", "200")]), to: file)
            let named = try home.run(["import", file, "--shred-source"])
            #expect(named.status == 0, "\(named.output)")
            #expect(named.stdout.contains("Read back 3 entries") && named.stderr.contains("overwrote"))
            #expect(!FileManager.default.fileExists(atPath: file))
        }
    }

    /// Holds msal-extensions' lock on `cache` (an exclusive `flock` on `<cache>.lockfile`, with the holder's pid
    /// and name written in it, as Azure CLI holds it while it writes) until `release` is called.
    final class AzureCLILock: @unchecked Sendable {
        let descriptor: Int32
        init(_ cache: String) {
            descriptor = open(cache + ".lockfile", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            #expect(flock(descriptor, LOCK_EX) == 0)
            let note = Array("\(getpid()) az-holding".utf8)
            _ = note.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        }
        func release() {
            flock(descriptor, LOCK_UN)
            close(descriptor)
        }
    }

    @Test func shredSourceWaitsForAzureCLIsLockAndNamesItsHolder() throws {
        try Home.with { home in
            #expect(try home.store.run(["init"]).status == 0)
            let document = Self.cache(refreshToken: "CANARY-RT-1", accessTokens: [("CANARY-AT-1", "a", "100")])
            try home.write(document, to: home.azureCLI)
            let lock = AzureCLILock(home.azureCLI)
            defer { lock.release() }
            let run = try home.run(["import", "--from", "azure-cli", "--shred-source"], extra: ["TOKEN_CACHE_LOCK_TIMEOUT": "0.5"])
            #expect(run.status == 75, "\(run.output)")
            #expect(run.stderr.contains("is held by process \(getpid()) (az-holding)"), "\(run.stderr)")
            #expect(run.stderr.contains("0.5 s") && run.stderr.contains("kept") && run.stderr.contains("nothing was imported"))
            Self.expectNoCanary(run)
            #expect(try String(contentsOfFile: home.azureCLI, encoding: .utf8) == document)
            #expect(!(try Self.exported(home)).contains("CANARY-AT-1"))
        }
    }

    /// Azure CLI writes a new token into the file while the import waits for its lock: the file is kept (exit 1),
    /// as Azure CLI left it, and nothing it held is lost.
    @Test func shredSourceKeepsAFileWrittenWhileItWaitedForTheLock() throws {
        try Home.with { home in
            #expect(try home.store.run(["init"]).status == 0)
            try home.write(Self.cache(refreshToken: "CANARY-RT-1", accessTokens: [("CANARY-AT-1", "a", "100")]), to: home.azureCLI)
            let lock = AzureCLILock(home.azureCLI)
            final class Outcome: @unchecked Sendable { var run: CacheToolRun? }
            let outcome = Outcome()
            let finished = DispatchSemaphore(value: 0)
            Thread {
                outcome.run = try? home.run(["import", "--from", "azure-cli", "--shred-source"], extra: ["TOKEN_CACHE_LOCK_TIMEOUT": "60"])
                finished.signal()
            }.start()
            Thread.sleep(forTimeInterval: 1)
            // As Azure CLI writes under its lock: the same file, rewritten in place.
            let rewritten = Self.cache(refreshToken: "CANARY-RT-2", refreshWritten: "200", accessTokens: [("CANARY-AT-2", "b", "200")])
            let handle = try #require(FileHandle(forUpdatingAtPath: home.azureCLI))
            try handle.truncate(atOffset: 0)
            try handle.write(contentsOf: Data(rewritten.utf8))
            try handle.close()
            lock.release()
            #expect(finished.wait(timeout: .now() + 120) == .success)
            let run = try #require(outcome.run)
            #expect(run.status == 1, "\(run.output)")
            #expect(run.stderr.contains("changed while it was imported"), "\(run.stderr)")
            #expect(try String(contentsOfFile: home.azureCLI, encoding: .utf8) == rewritten)
            #expect(try Self.exported(home).contains("CANARY-RT-2"))
        }
    }

    @Test func shredSourceKeepsTheFileWhenTheImportFailsOrRejectsEntries() throws {
        try Home.with { home in
            #expect(try home.store.run(["init"]).status == 0)
            let document = Self.cache(refreshToken: "CANARY-RT-1", accessTokens: [("CANARY-AT-1", "a", "100"), ("CANARY-AT-2", "b", "100")], invalid: true)
            try home.write(document, to: home.azureCLI)

            let failed = try home.run(["import", "--from", "azure-cli", "--shred-source"])
            #expect(failed.status == 65, "\(failed.output)")
            Self.expectNoCanary(failed)
            #expect(try String(contentsOfFile: home.azureCLI, encoding: .utf8) == document)

            let skipped = try home.run(["import", "--from", "azure-cli", "--shred-source", "--skip-invalid", "--json"])
            #expect(skipped.status == 1, "\(skipped.output)")
            Self.expectNoCanary(skipped)
            let report = Self.json(skipped)
            #expect(report["shredded"] as? Bool == false && (report["kept_because"] as? String)?.contains("not imported") == true)
            #expect((report["rejected"] as? [Any])?.count == 1)
            #expect(skipped.stderr.contains("kept \(home.azureCLI)") && !skipped.stderr.contains("btrfs"))
            #expect(try String(contentsOfFile: home.azureCLI, encoding: .utf8) == document)
        }
    }

    /// What the read-back accepts: the same secret, or a record of the identity written strictly later (for an
    /// access token, possibly a newer one for intersecting scopes); not another secret written at the same time.
    @Test func shredSourceNeedsEveryEntryInTheStoreAsItIsOrNewer() throws {
        try Home.with { home in
            #expect(try home.store.run(["init"]).status == 0)
            // The store already holds a refresh token of the identity written later, and an access token for
            // intersecting scopes written later: the import keeps both, and the file's entries are superseded.
            let newer = home.store.root + "/newer.json"
            try home.write(Self.cache(refreshToken: "CANARY-RT-NEW", refreshWritten: "300", accessTokens: [("CANARY-AT-NEW", "b c", "300")]), to: newer)
            #expect(try home.run(["import", newer]).status == 0)
            try home.write(Self.cache(refreshToken: "CANARY-RT-OLD", refreshWritten: "100", accessTokens: [("CANARY-AT-OLD", "a b", "100")]), to: home.azureCLI)
            let superseded = try home.run(["import", "--from", "azure-cli", "--shred-source", "--json"])
            #expect(superseded.status == 0, "\(superseded.output)")
            let verified = try #require(Self.json(superseded)["verified"] as? [String: Any])
            #expect(verified["identical"] as? Int == 1 && verified["superseded"] as? Int == 2)
            #expect(!FileManager.default.fileExists(atPath: home.azureCLI))

            // Another refresh token of the identity written at the same time: the store keeps its own, and the
            // file, which may hold the one that works, is kept.
            let tie = Self.cache(refreshToken: "CANARY-RT-TIE", refreshWritten: "300", accessTokens: [("CANARY-AT-NEW", "b c", "300")])
            try home.write(tie, to: home.azureCLI)
            let kept = try home.run(["import", "--from", "azure-cli", "--shred-source"])
            #expect(kept.status == 1, "\(kept.output)")
            Self.expectNoCanary(kept)
            #expect(kept.stdout.contains("RefreshToken entry") && kept.stdout.contains("not written later"))
            #expect(kept.stderr.contains("1 of its entries are not in the store"))
            #expect(try String(contentsOfFile: home.azureCLI, encoding: .utf8) == tie)
        }
    }

    /// An unsigned JWT whose payload carries `iat` (and a marker making each one distinct), as an ID token.
    static func idToken(issuedAt: Int, marker: String) -> String {
        func encoded(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return encoded("{\"alg\":\"none\"}") + "." + encoded("{\"iat\":\(issuedAt),\"exp\":\(issuedAt + 3600),\"uti\":\"\(marker)\"}") + "."
    }

    /// Azure CLI's cache as MSAL Python writes it: one refresh token per scope set (`refreshTokens`: secret, target,
    /// last_modification_time, in the file's order), an access token per scope set, an account and an ID token.
    static func azureCLICache(refreshTokens: [(secret: String, target: String, written: String)], idToken: String) -> String {
        let common = "\"home_account_id\": \"uid.utid\", \"environment\": \"login.microsoftonline.com\""
        let client = "\"client_id\": \"04b07795-8ddb-461a-bbee-02f9e1bf7b46\""
        let rts = refreshTokens.map { token in
            "\"rt-\(token.target)\": {\(common), \(client), \"secret\": \"\(token.secret)\", \"credential_type\": \"RefreshToken\", "
                + "\"target\": \"\(token.target)\", \"last_modification_time\": \"\(token.written)\"}"
        }
        let ats = refreshTokens.map { token in
            "\"at-\(token.target)\": {\(common), \(client), \"realm\": \"tenant-1\", \"target\": \"\(token.target)\", "
                + "\"secret\": \"CANARY-AT-\(token.target)\", \"cached_at\": \"\(token.written)\", \"expires_on\": \"1900000000\", "
                + "\"credential_type\": \"AccessToken\"}"
        }
        return "{" + [
            "\"AccessToken\": {\(ats.joined(separator: ", "))}",
            "\"RefreshToken\": {\(rts.joined(separator: ", "))}",
            "\"IdToken\": {\"idt\": {\(common), \(client), \"realm\": \"tenant-1\", \"secret\": \"\(idToken)\", \"credential_type\": \"IdToken\"}}",
            "\"Account\": {\"acc\": {\(common), \"realm\": \"tenant-1\", \"local_account_id\": \"uid\", \"username\": \"user@example.com\", "
                + "\"authority_type\": \"MSSTS\"}}",
        ].joined(separator: ",\n") + "}"
    }

    /// Azure CLI signs in for several scope sets in one second (one refresh token each, tied), then re-issues its
    /// ID token on a later refresh: both files import and are shredded in one command each; on the empty store the
    /// same-second tokens count as merged (never as stored records kept) and the file's first of them is the one
    /// stored; the re-issued ID token replaces the stored one.
    @Test func shredSourceAdoptsSameSecondRefreshTokensAndAReissuedIDToken() throws {
        try Home.with { home in
            #expect(try home.store.run(["init"]).status == 0)
            let firstID = Self.idToken(issuedAt: 100, marker: "first")
            let signIn = Self.azureCLICache(
                refreshTokens: [("CANARY-RT-A", "a", "100"), ("CANARY-RT-B", "b", "100"), ("CANARY-RT-C", "c", "100")], idToken: firstID)
            try home.write(signIn, to: home.azureCLI)
            let first = try home.run(["import", "--from", "azure-cli", "--shred-source", "--json"])
            #expect(first.status == 0, "\(first.output)")
            Self.expectNoCanary(first)
            let report = Self.json(first)
            #expect(report["shredded"] as? Bool == true && report["kept_because"] is NSNull, "\(first.output)")
            #expect((report["kept_existing"] as? [String: Int])?.values.reduce(0, +) == 0)
            #expect((report["merged_in_file"] as? [String: Int])?["RefreshToken"] == 2)
            #expect((report["written"] as? [String: Int])?["RefreshToken"] == 1)
            let verified = try #require(report["verified"] as? [String: Any])
            #expect(verified["merged"] as? Int == 2 && (verified["unverified"] as? [Any])?.isEmpty == true)
            #expect(!FileManager.default.fileExists(atPath: home.azureCLI))
            var stored = try Self.exported(home)
            #expect(stored.contains("CANARY-RT-A") && !stored.contains("CANARY-RT-B") && !stored.contains("CANARY-RT-C"))

            // Later Azure CLI refreshed: a new refresh token for a new scope set, its ID token re-issued.
            let secondID = Self.idToken(issuedAt: 200, marker: "second")
            let refreshed = Self.azureCLICache(
                refreshTokens: [("CANARY-RT-A", "a", "100"), ("CANARY-RT-B", "b", "100"), ("CANARY-RT-C", "c", "100"), ("CANARY-RT-D", "d", "200")],
                idToken: secondID)
            try home.write(refreshed, to: home.azureCLI)
            let again = try home.run(["import", "--from", "azure-cli", "--shred-source"])
            #expect(again.status == 0, "\(again.output)")
            Self.expectNoCanary(again)
            #expect(again.stdout.contains("3 superseded by records written later"), "\(again.output)")
            #expect(!FileManager.default.fileExists(atPath: home.azureCLI))
            stored = try Self.exported(home)
            #expect(stored.contains("CANARY-RT-D") && !stored.contains("CANARY-RT-A"))
            #expect(stored.contains(secondID) && !stored.contains(firstID))
        }
    }

    @Test func shredSourceRefusesLinksBeforeImporting() throws {
        try Home.with { home in
            #expect(try home.store.run(["init"]).status == 0)
            let target = home.store.root + "/real.json"
            try home.write(Self.cache(refreshToken: "CANARY-RT-1", accessTokens: [("CANARY-AT-1", "a", "100")]), to: target)
            try FileManager.default.createDirectory(atPath: home.path + "/.azure", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: home.azureCLI, withDestinationPath: target)
            let run = try home.run(["import", "--from", "azure-cli", "--shred-source"])
            #expect(run.status == 64 && run.stderr.contains("symbolic link") && run.stderr.contains("nothing was imported"), "\(run.output)")
            #expect(!(try Self.exported(home)).contains("CANARY-AT-1"))
            #expect(FileManager.default.fileExists(atPath: target))

            // A file with another name keeps its content under that name: refused too.
            try FileManager.default.removeItem(atPath: home.azureCLI)
            try FileManager.default.linkItem(atPath: target, toPath: home.azureCLI)
            let linked = try home.run(["import", "--from", "azure-cli", "--shred-source"])
            #expect(linked.status == 64 && linked.stderr.contains("1 other hard link"), "\(linked.output)")
            #expect(!(try Self.exported(home)).contains("CANARY-AT-1"))
        }
    }

    @Test(arguments: [
        ["import", "--discover", "cache.json"], ["import", "--discover", "--from", "azure-cli"], ["import", "--from", "azure-cli", "cache.json"],
        ["import", "--discover", "--shred-source"], ["import", "--discover", "--replace"], ["import", "-", "--shred-source"],
        ["import", "--shred-source"], ["import", "--from", "azure-powershell"],
    ])
    func conflictingOptionsAreUsageErrors(arguments: [String]) throws {
        try Home.with { home in
            let run = try home.run(arguments)
            #expect(run.status == 64, "\(run.output)")
            #expect(!FileManager.default.fileExists(atPath: home.store.directory))
        }
    }
}
