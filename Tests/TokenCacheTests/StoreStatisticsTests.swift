import Foundation
import Testing
@testable import TokenCache
import TokenCacheOperations

/// The operator's numbers agree with what the store holds: kinds, expiry states, the largest home accounts and every
/// client by fingerprint, write times, and the storage's own figures.
@Suite struct StoreStatisticsTests {
    static let now: Int64 = 1_800_000_000
    static let environment = "login.microsoftonline.com"

    @Test(arguments: TestBackend.allCases)
    func statisticsCountWhatIsStored(backend: TestBackend) throws {
        try TestStore.with(backend) { _, cache in
            // Account i has i + 1 access tokens of client c0 (valid, expiring within 5 min, expired, expiring this second, in turn).
            try cache.write { writer in
                for account in 0..<12 {
                    let home = "u\(account).t"
                    try writer.put(Account(homeAccountID: home, environment: Self.environment, realm: "t", localAccountID: "u", username: "u\(account)@x", authorityType: "MSSTS"))
                    for index in 0...account {
                        let expiresOn = Self.now + [3_600, 120, -5, 0][index % 4]
                        try writer.put(AccessToken(
                            homeAccountID: home, environment: Self.environment, clientID: index == 0 ? "C0" : "c0", realm: "t",
                            target: "s\(index).read", secret: Secret("at"), cachedAt: Self.now - 100, expiresOn: expiresOn
                        ))
                    }
                    try writer.put(RefreshToken(homeAccountID: home, environment: Self.environment, clientID: "c1", secret: Secret("rt"), expiresOn: account == 0 ? Self.now - 1 : nil))
                }
                try writer.put(AppMetadata(clientID: "c1", environment: Self.environment))
            }
            let statistics = try cache.statistics(now: Self.now)
            let tokens = try cache.list(AccessToken.self).records
            #expect(statistics.records == [.account: 12, .accessToken: tokens.count, .refreshToken: 12, .idToken: 0, .appMetadata: 1])
            #expect(statistics.accessTokensValid == tokens.filter { $0.entity.expiresOn - Self.now >= 300 }.count)
            #expect(statistics.accessTokensExpiringSoon == tokens.filter { (1..<300).contains($0.entity.expiresOn - Self.now) }.count)
            #expect(statistics.accessTokensExpired == tokens.filter { $0.entity.expiresOn <= Self.now }.count)
            // No token here has a refresh_on: refresh due is exactly under five minutes left.
            #expect(statistics.accessTokensRefreshDue == statistics.accessTokensExpiringSoon)
            #expect(statistics.accessTokensValid + statistics.accessTokensRefreshDue + statistics.accessTokensExpired == tokens.count)
            #expect(statistics.refreshTokensExpired == 1)
            #expect(statistics.homeAccounts == 12)
            // The ten largest, most records first: account 11 (1 + 12 + 1 records) down to account 2.
            #expect(statistics.largestAccounts.map(\.homeAccountID) == (2...11).reversed().map { "u\($0).t" })
            #expect(statistics.largestAccounts.first?.records == 14 && statistics.largestAccounts.first?.accessTokens == 12)
            // Client ids are one client whatever their case; fingerprints are 16 hex digits, distinct, stable.
            #expect(statistics.clients.count == 2)
            let c0 = try #require(statistics.clients.first { $0.clientID.lowercased() == "c0" })
            #expect(c0.accessTokens == tokens.count && c0.refreshTokens == 0)
            let c1 = try #require(statistics.clients.first { $0.clientID == "c1" })
            #expect(c1.refreshTokens == 12 && c1.appMetadata == 1 && c1.records == 13)
            #expect(statistics.clients.allSatisfy { $0.fingerprint.count == 16 && $0.fingerprint.allSatisfy(\.isHexDigit) })
            #expect(try cache.statistics(now: Self.now).clients.map(\.fingerprint) == statistics.clients.map(\.fingerprint))
            #expect(statistics.oldestWrite != nil && statistics.oldestWrite! <= statistics.newestWrite!)
            #expect(statistics.corrupt.isEmpty)
            // The storage's figures: one entry per record, per database.
            let entries = Dictionary(uniqueKeysWithValues: statistics.storage.databases.map { ($0.name, $0.entries) })
            #expect(entries["access_tokens"] == tokens.count && entries["accounts"] == 12 && entries["refresh_tokens"] == 12)
            if backend == .lmdb {
                #expect(statistics.storage.pageSize == 4096 && statistics.storage.usedBytes > 0 && statistics.storage.mapSize >= statistics.storage.usedBytes)
                #expect(statistics.storage.databases.first { $0.name == "access_tokens" }!.depth >= 1)
                #expect(statistics.storage.files["data.mdb"].map { $0 >= statistics.storage.usedBytes } == true)
                #expect(statistics.storage.readers.contains { $0.pid == getpid() && !$0.isStale })
            }
        }
    }
}
