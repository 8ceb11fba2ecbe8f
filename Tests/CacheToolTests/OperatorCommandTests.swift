import Foundation
import Testing
import TokenCache

#if canImport(Glibc)
import Glibc
#endif

/// `cachetool stats` and `cachetool purge-expired` as an operator runs them: numbers without identifiers unless
/// asked, and a purge that can be killed at any moment without losing a live token.
@Suite struct OperatorCommandTests {
    static let now = CacheToolTests.now

    @Test func statsCountsAndShowsIdentifiersOnlyWhenAsked() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data", "--now", "\(Self.now)"]).status == 0)
            let run = try store.run(["stats", "--now", "\(Self.now)"])
            #expect(run.status == 0, "\(run.output)")
            for line in ["records        17:", "access tokens  3 valid · 1 refresh due · 1 expired",
                         "2 home accounts · 1 app-only token · 3 clients; the largest home accounts:", "3 clients:",
                         "readers", "DATABASE", "access_tokens"] {
                #expect(run.stdout.contains(line), "\(line) in\n\(run.stdout)")
            }
            // Identifiers stay out unless asked; fingerprints stand for them.
            for identifier in ["5e3ce6c0-2b1f-4285-8d4b-75ee78787346", "1a2b3c4d-0000-4000-8000-a11ce0000001", "alice@contoso.example"] {
                #expect(!run.stdout.contains(identifier))
                #expect(!(try store.run(["stats", "--json"]).stdout.contains(identifier)))
            }
            let revealed = try store.run(["stats", "--reveal-identifiers", "--json", "--now", "\(Self.now)"])
            #expect(revealed.stdout.contains("5e3ce6c0-2b1f-4285-8d4b-75ee78787346") && revealed.stdout.contains("1a2b3c4d-0000-4000-8000-a11ce0000001"))
            let json = try #require(try JSONSerialization.jsonObject(with: Data(revealed.stdout.utf8)) as? [String: Any])
            #expect((json["records"] as? [String: Int])?["AccessToken"] == 5)
            let accessTokens = try #require(json["access_tokens"] as? [String: Any])
            #expect(accessTokens["valid"] as? Int == 3 && accessTokens["refresh_due"] as? Int == 1 && accessTokens["expiring_soon"] as? Int == 0)
            #expect(accessTokens["expired"] as? Int == 1 && json["home_accounts"] as? Int == 2 && json["app_only_tokens"] as? Int == 1)
            #expect(accessTokens["cap"] is NSNull)
            let storage = try #require(json["storage"] as? [String: Any])
            #expect((storage["databases"] as? [[String: Any]])?.count == 6 && (storage["files"] as? [String: Int])?["data.mdb"] != nil)
        }
    }

    @Test func purgeExpiredRemovesOnlyExpiredTokensAndSaysHowMany() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data", "--now", "\(Self.now)"]).status == 0)
            // The sample's tokens expire 2 h ago, and in 40, 53, 59 and 70 minutes.
            let dry = try store.run(["purge-expired", "--dry-run", "--now", "\(Self.now + 3_600)"])
            #expect(dry.status == 0 && dry.stdout.contains("would remove 4 access tokens and 0 refresh tokens") && dry.stdout.contains("nothing was removed"), "\(dry.output)")
            #expect(try store.run(["inspect", "--json", "--kind", "at"]).stdout.components(separatedBy: "\"credential_type\"").count - 1 == 5)
            let older = try store.run(["purge-expired", "--older-than", "1h", "--json", "--now", "\(Self.now + 3_600)"])
            let report = try #require(try JSONSerialization.jsonObject(with: Data(older.stdout.utf8)) as? [String: Any])
            #expect(older.status == 0 && report["access_tokens_removed"] as? Int == 1 && report["transactions"] as? Int == 1, "\(older.output)")
            let rest = try store.run(["purge-expired", "--now", "\(Self.now + 3_600)"])
            #expect(rest.status == 0 && rest.stdout.contains("removed 3 access tokens and 0 refresh tokens"), "\(rest.output)")
            let left = try store.run(["inspect", "--json", "--kind", "at", "--now", "\(Self.now + 3_600)"]).stdout
            #expect(left.components(separatedBy: "\"credential_type\"").count - 1 == 1 && left.contains("\"expires_on\" : \(Self.now + 70 * 60)"))
            #expect(try store.run(["purge-expired", "--older-than", "soon"]).status == 64)
        }
    }

    /// SIGKILL at random moments of a purge: every time, the store opens, verifies clean, and holds every token that
    /// has not expired; what the purge removed before dying stays removed, and a last run finishes the work.
    @Test func aKilledPurgeLosesNoLiveTokenAndResumes() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            let cache = try TokenStore.open(store.configuration)
            let tokens = 8_000
            try cache.write { writer in
                for index in 0..<tokens {
                    try writer.put(AccessToken(
                        homeAccountID: "u\(index % 800).t", environment: "login.microsoftonline.com", clientID: "c\(index % 7)",
                        realm: "t", target: "s\(index).read", secret: Secret("at-\(index)"), cachedAt: Self.now - 10,
                        expiresOn: Self.now + (index % 2 == 0 ? -60 : 3_600)
                    ))
                }
            }
            let live = Set(try cache.list(AccessToken.self).records.filter { $0.entity.expiresOn > Self.now }.map { $0.entity.secret.reveal() })
            #expect(live.count == tokens / 2)
            var expiredBefore = tokens / 2
            // Rounds whose kill landed between two committed batches (some removed, some left).
            var partial = 0
            for round in 0..<4 {
                try store.runKilled(["purge-expired", "--now", "\(Self.now)"], afterCommits: 1, jitter: 0.02)
                let verify = try store.run(["verify"])
                #expect(verify.status == 0, "round \(round): \(verify.output)")
                let records = try TokenStore.open(store.configuration).list(AccessToken.self).records
                #expect(Set(records.filter { $0.entity.expiresOn > Self.now }.map { $0.entity.secret.reveal() }) == live, "round \(round)")
                let expired = records.filter { $0.entity.expiresOn <= Self.now }.count
                #expect(expired <= expiredBefore)
                if expired < expiredBefore && expired > 0 { partial += 1 }
                expiredBefore = expired
                if expired == 0 { break }
            }
            #expect(partial > 0, "no kill landed inside the purge")
            let last = try store.run(["purge-expired", "--now", "\(Self.now)", "--json"])
            #expect(last.status == 0)
            let records = try TokenStore.open(store.configuration).list(AccessToken.self).records
            #expect(records.count == live.count && records.allSatisfy { $0.entity.expiresOn > Self.now })
        }
    }
}
