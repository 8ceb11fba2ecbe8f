import Foundation
import Testing
@testable import TokenCache
@_spi(Benchmarking) @testable import TokenCacheBenchmarking
@testable import TokenCacheMSAL
import TokenCacheRecords
import TokenCacheSodium
import TokenCacheStorage

/// The benchmark population (`cachetool bench`, Benchmarks/): its queries must be what their names say, or the
/// figures measure something else.
@Suite struct SyntheticPopulationTests {
    @Test(arguments: [
        (SyntheticPopulation.Profile.default, UInt64(0), 203),
        (.manyScopes, 0, 300),
        (.default, 42, 150),
        (.manyScopes, 7, 251),
    ], [SyntheticPopulation.Layout.asWritten, .keyOrdered])
    func queriesGiveTheirOutcome(
        shape: (profile: SyntheticPopulation.Profile, seed: UInt64, tokens: Int), layout: SyntheticPopulation.Layout
    ) throws {
        let population = SyntheticPopulation(accessTokens: shape.tokens, profile: shape.profile, seed: shape.seed)
        try TestStore.with { _, cache in
            try population.populate(cache, recordsPerTransaction: 100, layout: layout)
            #expect(try cache.info().recordCounts == population.expectedCounts)
            #expect(population.expectedCounts[.accessToken] == shape.tokens)
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

    /// The key-ordered bulk load bypasses `CacheWriter.put`: it must write what the puts write, under the keys they
    /// choose (a bucket's lone token under the bucket prefix where the backend places it there, FORMAT.md §4.3),
    /// sealed so that every record opens.
    @Test(arguments: TestBackend.allCases, [SyntheticPopulation.Profile.default, .manyScopes])
    func keyOrderedLoadWritesWhatPutsWrite(backend: TestBackend, profile: SyntheticPopulation.Profile) throws {
        let population = SyntheticPopulation(accessTokens: 400, profile: profile, seed: 3)
        typealias Contents = (snapshot: CacheSnapshot, loneTokens: Int, report: VerificationReport)
        func contents(_ layout: SyntheticPopulation.Layout) throws -> Contents {
            try TestStore.with(backend) { _, cache in
                try population.populate(cache, recordsPerTransaction: 150, layout: layout)
                var loneTokens = 0
                try cache.store.backend.read { txn in
                    try txn.forEach(in: KeySpace.accessTokens, prefix: []) { key, _ in key.withUnsafeBytes { key in
                        if key.count == RecordStore.bucketPrefixCount { loneTokens += 1 }
                        return true
                    } }
                }
                return (try cache.read { try $0.snapshot() }, loneTokens, try cache.verify())
            }
        }
        let puts = try contents(.asWritten), loaded = try contents(.keyOrdered)
        #expect(loaded.report.isClean && loaded.report.loneTokensUnderEntryKey == 0)
        #expect(loaded.report.verified == puts.report.verified)
        #expect(loaded.loneTokens == puts.loneTokens)
        // Only LMDB keys a bucket's lone token under the bucket prefix (``LonePlacement``).
        #expect(loaded.loneTokens > 0 || backend != .lmdb)
        func entities<E: CacheEntity>(_ records: [StoredEntity<E>]) -> Set<E> { Set(records.map(\.entity)) }
        #expect(entities(loaded.snapshot.accessTokens) == entities(puts.snapshot.accessTokens))
        #expect(entities(loaded.snapshot.accounts) == entities(puts.snapshot.accounts))
        #expect(entities(loaded.snapshot.idTokens) == entities(puts.snapshot.idTokens))
        #expect(entities(loaded.snapshot.refreshTokens) == entities(puts.snapshot.refreshTokens))
        #expect(entities(loaded.snapshot.appMetadata) == entities(puts.snapshot.appMetadata))
        #expect(loaded.snapshot.accessTokens.allSatisfy { $0.revision == 1 } && loaded.snapshot.idTokens.allSatisfy { $0.revision == 1 })
    }

    /// The bench's floor under either cipher, whichever the store was created with: the store's own opens the stored
    /// records, the other their copies re-sealed in memory (a copy that did not open would throw); a cipher the
    /// machine cannot run gives no floor rather than a wrong one.
    @Test(arguments: StoreCipher.allCases)
    func theFloorIsMeasuredUnderEitherCipher(storeCipher: StoreCipher) throws {
        let population = SyntheticPopulation(accessTokens: 60)
        try TestStore.with(cipher: storeCipher) { _, cache in
            try population.populate(cache)
            for cipher in StoreCipher.allCases {
                let timings = try #require(try cache.measureGetDecryptFloor(samples: 25, seed: 1, cipher: cipher), "\(cipher)")
                #expect(timings.count == 25 && timings.allSatisfy { $0 > 0 }, "\(cipher)")
            }
            #expect(try cache.measureGetDecryptFloor(samples: 10, seed: 1)?.count == 10)
            if storeCipher == .xchacha20Poly1305 {
                try AES256GCM.$availabilityOverride.withValue(false) { () throws in
                    #expect(try cache.measureGetDecryptFloor(samples: 10, seed: 1, cipher: .aes256GCM) == nil)
                    #expect(try cache.measureGetDecryptFloor(samples: 10, seed: 1, cipher: .xchacha20Poly1305)?.count == 10)
                }
            }
        }
    }

    /// It knows where each record goes only because nothing is stored yet.
    @Test func keyOrderedLoadRefusesAStoreWithRecords() throws {
        let population = SyntheticPopulation(accessTokens: 20)
        try TestStore.with { _, cache in
            try cache.put(population.accessToken(account: 0, slot: 0))
            #expect(throws: TokenCacheError.self) { try population.populate(cache, layout: .keyOrdered) }
            #expect(try cache.info().recordCounts[.accessToken] == 1)
        }
    }

    /// Its point on LMDB: full pages (two records of the large kinds each), where puts in random key order leave
    /// about 1.5 and puts in ascending key order one.
    @Test func keyOrderedLoadFillsLMDBPages() throws {
        let population = SyntheticPopulation(accessTokens: 2_000)
        func usedBytes(_ layout: SyntheticPopulation.Layout) throws -> Int {
            try TestStore.with { _, cache in
                try population.populate(cache, recordsPerTransaction: 1_000, layout: layout)
                return try cache.info().usedBytes
            }
        }
        let puts = try usedBytes(.asWritten), loaded = try usedBytes(.keyOrdered)
        #expect(Double(loaded) < 0.85 * Double(puts), "key-ordered \(loaded) bytes, put by put \(puts)")
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
