import Foundation
import Synchronization
import TestSupport
import Testing
import TokenCache

/// `cachetool ingest`, `lookup`, `accounts`, `remove-account`, through the built binary.
@Suite struct SilentFlowCLITests {
    static let now = ReferenceTime.now

    /// A response for home account `<uid>.utid1` with the given secrets, as `cachetool ingest` reads it from a file.
    static func response(
        accessToken: String, refreshToken: String, lifetime: Int = 3600, foci: Bool = false, uid: String = "uid1",
        username: String = "me@contoso.example", scope: String? = "User.Read openid profile"
    ) -> String {
        let idToken = unsignedJWT(payload: jsonText(["oid": uid, "preferred_username": username, "sub": "s", "tid": "utid1"]))
        return Responses.json(
            accessToken: accessToken, scope: scope, expiresIn: lifetime, refreshToken: refreshToken, idToken: idToken,
            clientInfo: Responses.clientInfo(uid: uid, utid: "utid1"), foci: foci ? "1" : nil
        )
    }

    func ingest(_ store: CLIStore, _ body: String, client: String = "client-1", now: Int64 = now) throws -> CacheToolRun {
        let file = store.root + "/response-\(UUID().uuidString).json"
        try body.write(toFile: file, atomically: true, encoding: .utf8)
        return try store.run(["ingest", "--client-id", client, "--authority", "https://login.microsoftonline.com/common", "--scopes", "User.Read", "--now", "\(now)", file])
    }

    func lookup(_ store: CLIStore, _ extra: [String] = [], client: String = "client-1", now: Int64 = now) throws -> (CacheToolRun, [String: Any]) {
        let run = try store.run(
            ["lookup", "--client-id", client, "--account", "uid1.utid1", "--authority", "https://login.windows.net/organizations",
             "--scopes", "user.read", "--json", "--now", "\(now)"] + extra
        )
        let json = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]) ?? [:]
        return (run, json)
    }

    @Test func lookupJSONHasTheDocumentedShapeAndRedactsUnlessAsked() throws {
        try CLIStore.with { (store: CLIStore) throws in
            #expect(try store.run(["init"]).status == 0)
            let ingested = try ingest(store, Self.response(accessToken: "AT-CANARY-91", refreshToken: "RT-CANARY-92"))
            #expect(ingested.status == 0, "\(ingested.output)")
            let (run, json) = try lookup(store)
            #expect(run.status == 0, "\(run.output)")
            #expect(Set(json.keys) == ["outcome", "refresh_recommended", "family_membership", "access_token", "refresh_token", "id_token", "account", "corrupt_records"])
            #expect((json["corrupt_records"] as? [Any])?.isEmpty == true)
            #expect(json["family_membership"] as? String == "not_member")
            #expect(json["outcome"] as? String == "hit" && json["refresh_recommended"] as? Bool == false)
            let accessToken = try #require(json["access_token"] as? [String: Any])
            #expect(Set(accessToken.keys) == [
                "secret", "home_account_id", "environment", "realm", "client_id", "target", "token_type", "key_id", "ext_cache_key",
                "user_assertion_hash", "cached_at", "expires_on", "extended_expires_on", "refresh_on",
            ])
            #expect(accessToken["ext_cache_key"] is NSNull)
            #expect(accessToken["expires_on"] as? Int == Int(Self.now) + 3600 && accessToken["realm"] as? String == "utid1")
            #expect(accessToken["refresh_on"] is NSNull)
            let refreshToken = try #require(json["refresh_token"] as? [String: Any])
            #expect(Set(refreshToken.keys) == ["secret", "home_account_id", "environment", "client_id", "family_id"])
            let idToken = try #require(json["id_token"] as? [String: Any])
            #expect(Set(idToken.keys) == ["secret", "realm", "claims"] && (idToken["claims"] as? [String: Any])?["tid"] as? String == "utid1")
            let account = try #require(json["account"] as? [String: Any])
            #expect(Set(account.keys) == ["home_account_id", "environment", "realm", "username", "local_account_id", "authority_type"])
            #expect(!run.output.contains("AT-CANARY-91") && !run.output.contains("RT-CANARY-92"))
            #expect(accessToken["secret"] as? String == Secret.redactionMarker)
            let (revealed, revealedJSON) = try lookup(store, ["--reveal-secrets"])
            #expect(revealed.stdout.contains("AT-CANARY-91"))
            #expect((revealedJSON["refresh_token"] as? [String: Any])?["secret"] as? String == "RT-CANARY-92")
        }
    }

    /// An app token stored with `--parameter fmi_path=…` answers a lookup with the same parameter, or with its key,
    /// and nothing else; the parameter's value never reaches the output.
    @Test func extendedCacheKeysPartitionAppTokens() throws {
        try CLIStore.with { (store: CLIStore) throws in
            #expect(try store.run(["init"]).status == 0)
            let authority = "https://login.microsoftonline.com/utid1"
            func ingest(_ secret: String, _ extra: [String]) throws -> CacheToolRun {
                let file = store.root + "/response-\(UUID().uuidString).json"
                try #"{"access_token": "\#(secret)", "token_type": "Bearer", "expires_in": 3600}"#.write(toFile: file, atomically: true, encoding: .utf8)
                return try store.run(
                    ["ingest", "--client-id", "app-1", "--authority", authority, "--scopes", ".default", "--grant-type", "client_credentials",
                     "--now", "\(Self.now)", "--json", file] + extra
                )
            }
            func lookup(_ extra: [String]) throws -> (CacheToolRun, String?) {
                let run = try store.run(
                    ["lookup", "--client-id", "app-1", "--account", "", "--authority", authority, "--scopes", ".default", "--json",
                     "--include-secrets", "--now", "\(Self.now)"] + extra
                )
                let json = (try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]) ?? [:]
                return (run, (json["access_token"] as? [String: Any])?["secret"] as? String)
            }
            let path = "fmi_path=SECRET-PATH-CANARY/1"
            let stored = try ingest("at-fmi", ["--parameter", path])
            #expect(stored.status == 0, "\(stored.output)")
            let key = try #require((try JSONSerialization.jsonObject(with: Data(stored.stdout.utf8)) as? [String: Any])?["ext_cache_key"] as? String)
            #expect(key == ExtendedCacheKey(parameters: ["fmi_path": "SECRET-PATH-CANARY/1"])?.value)
            #expect(try ingest("at-plain", []).status == 0)
            #expect(try lookup([]).1 == "at-plain")
            let (byParameter, secret) = try lookup(["--parameter", path])
            #expect(secret == "at-fmi")
            #expect(!byParameter.output.contains("SECRET-PATH-CANARY"))
            #expect(try lookup(["--ext-cache-key", key.uppercased()]).1 == "at-fmi")
            #expect(try lookup(["--parameter", "fmi_path=other"]).1 == nil)
            // Standard parameters make no key, as in MSAL.
            #expect(try lookup(["--parameter", "grant_type=client_credentials"]).1 == "at-plain")
            for (bad, message) in [
                (["--parameter", "fmi_path"], "--parameter takes name=value"),
                (["--parameter", "=x"], "--parameter takes name=value"),
                (["--parameter", "a=1", "--parameter", "a=2"], "given twice"),
                (["--parameter", path, "--ext-cache-key", key], "cannot be combined"),
                (["--ext-cache-key", "has space"], "--ext-cache-key: the extended cache key holds a byte outside printable ASCII"),
            ] {
                let (run, _) = try lookup(bad)
                #expect(run.status == 64, "\(bad): \(run.output)")
                #expect(run.stderr.contains(message), "\(bad): \(run.stderr)")
                #expect(!run.output.contains("SECRET-PATH-CANARY"))
            }
        }
    }

    /// A web API's token for a caller, stored and found by the caller's assertion in a file (or its hash), never by
    /// the account alone, and signed out by partition; the assertion never reaches the output or the store.
    @Test func onBehalfOfPartitionsThroughTheCLI() throws {
        try CLIStore.with { (store: CLIStore) throws in
            #expect(try store.run(["init"]).status == 0)
            let canary = "ASSERTION-CANARY-a3f09c"
            let assertionFile = store.root + "/assertion.jwt"
            try (canary + "\n").write(toFile: assertionFile, atomically: true, encoding: .utf8)
            let responseFile = store.root + "/obo.json"
            try Self.response(accessToken: "at-obo", refreshToken: "rt-obo").write(toFile: responseFile, atomically: true, encoding: .utf8)
            let stored = try store.run(
                ["ingest", "--client-id", "client-1", "--authority", "https://login.microsoftonline.com/common", "--scopes", "User.Read",
                 "--grant-type", "urn:ietf:params:oauth:grant-type:jwt-bearer", "--assertion-file", assertionFile, "--now", "\(Self.now)", "--json", responseFile]
            )
            #expect(stored.status == 0, "\(stored.output)")
            let hash = try #require((try JSONSerialization.jsonObject(with: Data(stored.stdout.utf8)) as? [String: Any])?["user_assertion_hash"] as? String)
            #expect(hash == OnBehalfOfKey(assertion: Secret(canary)).value)
            func secret(_ extra: [String]) throws -> String? {
                let (run, json) = try lookup(store, extra + ["--include-secrets"])
                #expect(run.status == 0, "\(run.output)")
                #expect(!run.output.contains(canary))
                return (json["access_token"] as? [String: Any])?["secret"] as? String
            }
            #expect(try secret([]) == nil)  // the account's own lookup: nothing
            #expect(try secret(["--assertion-file", assertionFile]) == "at-obo")
            #expect(try secret(["--on-behalf-of", hash]) == "at-obo")
            #expect(try secret(["--on-behalf-of", hash.lowercased()]) == nil)  // a hash is case-sensitive
            let removed = try store.run(["remove-account", "--assertion-file", assertionFile, "--all-clients", "--json"])
            #expect(removed.status == 0, "\(removed.output)")
            let counts = (try JSONSerialization.jsonObject(with: Data(removed.stdout.utf8)) as? [String: Any]) ?? [:]
            #expect(counts["access_tokens"] as? Int == 1 && counts["refresh_tokens"] as? Int == 1 && counts["accounts"] as? Int == 0)
            #expect(try secret(["--on-behalf-of", hash]) == nil)
            let both = try store.run(["remove-account", "--account", "uid1.utid1", "--on-behalf-of", hash, "--all-clients"])
            #expect(both.status == 64 && both.stderr.contains("--account cannot be combined"), "\(both.output)")
            let holding = try files(under: store.directory, holding: canary)
            #expect(holding.isEmpty, "\(holding) hold the assertion")
        }
    }

    @Test func outcomesFollowExpiryAndTheRefreshToken() throws {
        try CLIStore.with { (store: CLIStore) throws in
            #expect(try store.run(["init"]).status == 0)
            #expect(try lookup(store).1["outcome"] as? String == "interaction_required")
            #expect(try ingest(store, Self.response(accessToken: "a", refreshToken: "r")).status == 0)
            #expect(try lookup(store, now: Self.now + 3600 - 300).1["outcome"] as? String == "hit")
            #expect(try lookup(store, now: Self.now + 3600 - 299).1["outcome"] as? String == "refresh")
            #expect(try lookup(store, client: "client-2").1["outcome"] as? String == "interaction_required")
        }
    }

    @Test func malformedResponsesAreRejectedWithAClearErrorAndNothingStored() throws {
        try CLIStore.with { (store: CLIStore) throws in
            #expect(try store.run(["init"]).status == 0)
            for body in [#"{"token_type":"Bearer","expires_in":1}"#, #"{"access_token":"SECRET-IN-BAD-RESPONSE","expires_in":-1}"#, "not json"] {
                let run = try ingest(store, body)
                #expect(run.status == 65 && run.stderr.contains("invalidArgument"), "\(run.output)")
                #expect(!run.output.contains("SECRET-IN-BAD-RESPONSE"))
            }
            #expect(try store.run(["info", "--json"]).stdout.contains(#""AccessToken" : 0"#))
        }
    }

    @Test func accountsAndSignOut() throws {
        try CLIStore.with { (store: CLIStore) throws in
            #expect(try store.run(["init"]).status == 0)
            #expect(try ingest(store, Self.response(accessToken: "a1", refreshToken: "family", foci: true)).status == 0)
            #expect(try ingest(store, Self.response(accessToken: "a2", refreshToken: "own"), client: "client-2").status == 0)
            let accounts = try store.run(["accounts", "--json"])
            let json = try #require(try JSONSerialization.jsonObject(with: Data(accounts.stdout.utf8)) as? [String: Any])
            let list = try #require(json["accounts"] as? [[String: Any]])
            #expect(list.count == 1 && list[0]["home_account_id"] as? String == "uid1.utid1" && list[0]["username"] as? String == "me@contoso.example")
            #expect(try store.run(["accounts"]).stdout.contains("me@contoso.example"))
            #expect(try store.run(["remove-account", "--account", "uid1.utid1"]).status == 64)
            let removed = try store.run(["remove-account", "--account", "uid1.utid1", "--client-id", "client-1", "--json"])
            var counts = try #require(try JSONSerialization.jsonObject(with: Data(removed.stdout.utf8)) as? [String: Any])
            #expect((counts.removeValue(forKey: "damaged_records") as? [Any])?.isEmpty == true)
            #expect(counts as? [String: Int] == ["access_tokens": 1, "refresh_tokens": 1, "id_tokens": 1, "accounts": 1])
            #expect(try lookup(store, client: "client-2").1["outcome"] as? String == "hit")
            #expect(try store.run(["remove-account", "--account", "uid1.utid1", "--all-clients"]).status == 0)
            #expect(try lookup(store, client: "client-2").1["outcome"] as? String == "interaction_required")
        }
    }

    /// Several processes ingest and look up at once. Every ingest writes an access token and a refresh token
    /// tagged with the same (writer, round) and an access-token lifetime derived from it; every lookup must see a
    /// pair from one ingest and a lifetime that matches its tag: no torn or mixed snapshot, ever.
    @Test func concurrentProcessesAlwaysSeeConsistentRecords() throws {
        try CLIStore.with { (store: CLIStore) throws in
            #expect(try store.run(["init"]).status == 0)
            #expect(try ingest(store, Self.response(accessToken: "w9-r0-l4000", refreshToken: "w9-r0", lifetime: 4000)).status == 0)
            let writers = 3, readers = 3, rounds = 12
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: writers + readers) { worker in
                do {
                    for round in 1...rounds {
                        if worker < writers {
                            let lifetime = 3600 + worker * 100 + round
                            let run = try ingest(store, Self.response(accessToken: "w\(worker)-r\(round)-l\(lifetime)", refreshToken: "w\(worker)-r\(round)", lifetime: lifetime))
                            if run.status != 0 { failures.withLock { $0.append("ingest: \(run.output)") } }
                        } else {
                            let (run, json) = try lookup(store, ["--reveal-secrets"])
                            guard run.status == 0, json["outcome"] as? String == "hit",
                                let accessToken = json["access_token"] as? [String: Any], let secret = accessToken["secret"] as? String,
                                let refresh = (json["refresh_token"] as? [String: Any])?["secret"] as? String,
                                let expiresOn = accessToken["expires_on"] as? Int, let cachedAt = accessToken["cached_at"] as? Int
                            else {
                                failures.withLock { $0.append("lookup: \(run.output)") }
                                continue
                            }
                            let parts = secret.split(separator: "-")
                            if "\(parts[0])-\(parts[1])" != refresh || "l\(expiresOn - cachedAt)" != parts[2] {
                                failures.withLock { $0.append("inconsistent snapshot: \(secret) with \(refresh), lifetime \(expiresOn - cachedAt)") }
                            }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            let problems = failures.withLock { $0 }
            #expect(problems.isEmpty, "\(problems.prefix(5))")
            // One access token survives: each ingest's intersect-delete replaced the previous one.
            let info = try store.run(["info", "--json"])
            #expect(info.stdout.contains(#""AccessToken" : 1"#), "\(info.stdout)")
        }
    }
}
