import Foundation
import Testing
import TokenCache

/// `inspect --summary`, `stats` and `info` count one store the same way: one definition per count, from the library.
/// The sample store holds app-only tokens (of a client acting as itself, no person), a token whose refresh time has
/// passed, expired ones; the test adds one with two minutes left (refresh due, and no longer returned by a lookup).
@Suite struct CountAgreementTests {
    static let now = CacheToolTests.now

    static func json(_ run: CacheToolRun) throws -> [String: Any] {
        #expect(run.status == 0, "\(run.output)")
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any], "\(run.output)")
    }

    @Test func everyViewCountsTheSameStoreTheSameWay() throws {
        try CLIStore.with { store in
            #expect(try store.run(["init"]).status == 0)
            #expect(try store.run(["sample-data", "--now", "\(Self.now)"]).status == 0)
            _ = try TokenStore.open(store.configuration).write { writer in
                try writer.put(AccessToken(
                    homeAccountID: "", environment: "login.microsoftonline.com", clientID: "c0ffee00-1234-4abc-8def-0123456789ab",
                    realm: "7e9f1a3b-5c7d-4e9f-8a1b-3c5d7e9f1a3b", target: "https://vault.azure.net/.default", secret: Secret("s"),
                    cachedAt: Self.now - 3_000, expiresOn: Self.now + 120
                ))
            }
            let summary = try Self.json(store.run(["inspect", "--summary", "--json", "--now", "\(Self.now)"]))
            let stats = try Self.json(store.run(["stats", "--json", "--now", "\(Self.now)"]))
            let info = try Self.json(store.run(["info", "--json"]))

            // People: two home accounts (alice, bob); the two app-only tokens are no account, in either view.
            #expect(summary["home_accounts"] as? Int == 2 && stats["home_accounts"] as? Int == 2)
            #expect(summary["app_only_tokens"] as? Int == 2 && stats["app_only_tokens"] as? Int == 2)
            let largest = try #require(stats["largest_accounts"] as? [[String: Any]])
            #expect(largest.count == 2)
            #expect(summary["clients"] as? Int == (stats["clients"] as? [Any])?.count)

            // Access tokens by state: the same three numbers, and "expiring soon" a part of "refresh due".
            let records = try #require(summary["records"] as? [String: Any])
            let summaryAccess = try #require(records["access_tokens"] as? [String: Int])
            let statsAccess = try #require(stats["access_tokens"] as? [String: Any])
            for state in ["valid", "refresh_due", "expired"] {
                #expect(summaryAccess[state] == statsAccess[state] as? Int, "\(state): \(summaryAccess) vs \(statsAccess)")
            }
            #expect(summaryAccess["refresh_due"] == 2, "bob's token past its refresh time, and the one with two minutes left")
            #expect(statsAccess["expiring_soon"] as? Int == 1)
            #expect(summaryAccess["valid"]! + summaryAccess["refresh_due"]! + summaryAccess["expired"]! == summaryAccess["total"])

            // Records per kind: the summary (no filter), stats and info agree.
            let infoRecords = try #require(info["records"] as? [String: Int])
            let statsRecords = try #require(stats["records"] as? [String: Int])
            #expect(infoRecords == statsRecords)
            #expect(summaryAccess["total"] == infoRecords["AccessToken"])

            // Reader slots as numbers, the same definition as stats'.
            #expect(info["readers_in_use"] as? Int == 1 && info["max_readers"] as? Int == 126 && info["stale_readers"] as? Int == 0)
            let storage = try #require(stats["storage"] as? [String: Any])
            let readers = try #require(storage["readers"] as? [String: Any])
            #expect(readers["in_use"] as? Int == info["readers_in_use"] as? Int && readers["max"] as? Int == info["max_readers"] as? Int)
            #expect(info["readers"] as? String == "1/126", "kept for the scripts that read it")

            // The text views say the same, in the same words.
            let summaryText = try store.run(["inspect", "--summary", "--now", "\(Self.now)", "--color", "never"]).stdout
            let statsText = try store.run(["stats", "--now", "\(Self.now)"]).stdout
            let infoText = try store.run(["info"]).stdout
            for owners in ["2 home accounts · 2 app-only tokens · 3 clients"] {
                #expect(summaryText.contains(owners), "\(summaryText)")
                #expect(statsText.contains(owners), "\(statsText)")
            }
            #expect(statsText.contains("access tokens  3 valid · 2 refresh due · 1 expired"), "\(statsText)")
            #expect(statsText.contains("of those due, 1 with under 5 min left"), "\(statsText)")
            #expect(summaryText.contains("access token         6      3            2        1"), "\(summaryText)")
            #expect(statsText.contains("1 of 126 reader slots in use, 0 stale") && infoText.contains("1 of 126 reader slots in use, 0 stale"))
        }
    }
}
