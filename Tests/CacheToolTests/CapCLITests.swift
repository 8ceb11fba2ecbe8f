import Foundation
import Testing
import TokenCache
import TokenCacheOperations

#if canImport(Glibc)
import Glibc
#endif

/// `cachetool cap` as an operator runs it, and a cap that a kill interrupts while it evicts.
@Suite struct CapCLITests {
    static let now = CacheToolTests.now

    @Test func capShowsSetsAndRemovesTheCapAndStatsAndIngestReportIt() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            // Tokens valid now: the cap and the ingest below judge expiry by the clock.
            #expect(try store.run(["sample-data", "--now", "\(Int(Date().timeIntervalSince1970))"]).status == 0)
            let shown = try store.run(["cap"])
            #expect(shown.status == 0 && shown.stdout == "no access-token cap (5 access tokens stored)\n", "\(shown.output)")
            let set = try store.run(["cap", "--access-tokens", "3", "--json"])
            let report = try #require(try JSONSerialization.jsonObject(with: Data(set.stdout.utf8)) as? [String: Int])
            #expect(set.status == 0 && report["cap"] == 3 && report["access_tokens"] == 3 && report["evicted"] == 2, "\(set.output)")
            let stats = try store.run(["stats", "--json", "--now", "\(Self.now)"])
            let json = try #require(try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])
            #expect((json["access_tokens"] as? [String: Any])?["cap"] as? Int == 3)
            #expect(try store.run(["stats", "--now", "\(Self.now)"]).stdout.contains(" · cap 3\n"))

            // A response for a fourth token evicts one, and says so.
            let response = store.root + "/response.json"
            try #"{"access_token":"AT-CAP","token_type":"Bearer","expires_in":3600,"client_info":"eyJ1aWQiOiJ1IiwidXRpZCI6InQifQ"}"#
                .write(toFile: response, atomically: true, encoding: .utf8)
            let ingest = try store.run([
                "ingest", "--client-id", "cap-client", "--authority", "https://login.microsoftonline.com/t", "--scopes", "s", response,
            ])
            #expect(ingest.status == 0 && ingest.stdout.contains("Evicted 1 access token(s) to stay under the store's cap."), "\(ingest.output)")
            #expect(try store.run(["cap"]).stdout == "access-token cap: 3 (3 access tokens stored)\n")

            #expect(try store.run(["cap", "--access-tokens", "0"]).status == 64)
            #expect(try store.run(["cap", "--access-tokens", "2", "--none"]).status == 64)
            let removed = try store.run(["cap", "--none"])
            #expect(removed.status == 0 && removed.stdout == "removed the access-token cap (3 access tokens stored)\n", "\(removed.output)")
            #expect((try JSONSerialization.jsonObject(with: Data(try store.run(["cap", "--json"]).stdout.utf8)) as? [String: Any])?["cap"] is NSNull)
        }
    }

    /// SIGKILL while a lowered cap evicts: every time, the store verifies clean, has lost nothing but access tokens
    /// (and only among the oldest), and keeps the cap; a last run brings it down to exactly the newest tokens.
    @Test func aKilledCapEvictionLosesNothingElseAndResumes() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let cache = try TokenStore.open(store.configuration)
            let tokens = 8_000, cap = 1_000
            try cache.write { writer in
                for index in 0..<tokens {
                    try writer.put(AccessToken(
                        homeAccountID: "u\(index % 800).t", environment: "login.microsoftonline.com", clientID: "c\(index % 7)",
                        realm: "t", target: "s\(index).read", secret: Secret("at-\(index)"), cachedAt: Self.now - 100_000 + Int64(index),
                        expiresOn: 4_000_000_000
                    ))
                }
                for index in 0..<800 {
                    try writer.put(RefreshToken(homeAccountID: "u\(index).t", environment: "login.microsoftonline.com", clientID: "c0", secret: Secret("rt")))
                }
            }
            var before = tokens
            var partial = 0
            for round in 0..<4 {
                // Killed a moment after its second commit (the cap itself, then a first batch of evictions), inside
                // the batches that follow.
                try store.runKilled(["cap", "--access-tokens", "\(cap)"], afterCommits: 2, jitter: 0.01)
                let verify = try store.run(["verify"])
                #expect(verify.status == 0, "round \(round): \(verify.output)")
                let reopened = try TokenStore.open(store.configuration)
                #expect(try reopened.accessTokenCap() == cap)
                #expect(try reopened.list(RefreshToken.self).records.count == 800)
                let left = try reopened.list(AccessToken.self).records.map { Int($0.entity.secret.reveal().dropFirst(3))! }
                #expect(left.count >= cap && left.count <= before, "round \(round)")
                // Only tokens among the oldest went: the newest `cap` are all there.
                #expect(Set(left).isSuperset(of: (tokens - cap)..<tokens), "round \(round)")
                if left.count < before && left.count > cap { partial += 1 }
                before = left.count
                if left.count == cap { break }
            }
            #expect(partial > 0, "no kill landed inside the eviction")
            #expect(try store.run(["cap", "--access-tokens", "\(cap)"]).status == 0)
            let left = try TokenStore.open(store.configuration).list(AccessToken.self).records.map { Int($0.entity.secret.reveal().dropFirst(3))! }
            #expect(Set(left) == Set((tokens - cap)..<tokens))
        }
    }
}
