import Foundation
import Testing
@_spi(Benchmarking) @testable import TokenCache

/// The benchmark population (`cachetool bench`, Benchmarks/): its queries must be what their names say, or the
/// figures measure something else.
@Suite struct SyntheticPopulationTests {
    @Test(arguments: [
        (SyntheticPopulation.Profile.default, UInt64(0), 203),
        (.manyScopes, 0, 300),
        (.default, 42, 150),
        (.manyScopes, 7, 251),
    ])
    func queriesGiveTheirOutcome(profile: SyntheticPopulation.Profile, seed: UInt64, tokens: Int) throws {
        let population = SyntheticPopulation(accessTokens: tokens, profile: profile, seed: seed)
        try TestStore.with { _, cache in
            try population.populate(cache, recordsPerTransaction: 100)
            #expect(try cache.info().recordCounts == population.expectedCounts)
            #expect(population.expectedCounts[.accessToken] == tokens)
            for i in 0..<60 {
                let (account, slot) = population.drawToken(i, stream: 1)
                #expect(account < population.accounts && slot < population.accessTokenCount(account: account))
                let hitQuery = population.hitQuery(account: account, slot: slot, number: i)
                let hit = try cache.silentLookup(hitQuery)
                #expect(hit.outcome == .hit)
                #expect(hit.accessToken?.entity.key == population.accessToken(account: account, slot: slot).key)
                let refresh = try cache.silentLookup(population.refreshQuery(account: account, slot: slot))
                #expect(refresh.outcome == .refresh && refresh.accessToken == nil)
                #expect(try refresh.companions.refreshToken != nil)
                let miss = try cache.silentLookup(population.missQuery(number: i))
                #expect(miss.outcome == .interactionRequired)
                #expect(try miss.companions.refreshToken == nil && miss.accessToken == nil)
            }
            // An ingested response replaces records and adds none.
            let response = population.tokenResponse(number: 3)
            _ = try cache.ingest(TokenResponse(json: response.json), context: response.context)
            #expect(try cache.info().recordCounts == population.expectedCounts)
            // The export's size, one account at a time, is the whole export's.
            for secrets in [true, false] {
                let whole = try cache.exportMSAL(options: MSALExportOptions(includeSecrets: secrets)).document.count
                #expect(try population.msalExportByteCount(of: cache, includeSecrets: secrets) == whole)
            }
        }
    }

    @Test func profilesHaveTheirDistribution() {
        let many = SyntheticPopulation(accounts: 400, profile: .manyScopes)
        let counts = (0..<many.accounts).map { many.accessTokenCount(account: $0) }
        #expect(counts.min() == 5 && counts.max() == 20)
        #expect(many.accessTokens == counts.reduce(0, +))
        let plain = SyntheticPopulation(accessTokens: 1_005)
        #expect(plain.accounts == 101 && plain.accessTokenCount(account: 100) == 5)
        // A uniform draw reaches every token of a small population.
        let small = SyntheticPopulation(accessTokens: 37, profile: .manyScopes)
        var seen = Set<[Int]>()
        for i in 0..<2_000 { let (a, s) = small.drawToken(i, stream: 9); seen.insert([a, s]) }
        #expect(seen.count == 37)
    }
}

@Suite struct SyntheticPopulationEncodingTests {
    @Test func base64urlIsFoundationsWithoutPadding() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: SyntheticPopulation.mix(UInt64($0 * 31 + length))) }
            let expected = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(SyntheticPopulation.base64url(bytes) == expected, "\(length)")
        }
    }
}
