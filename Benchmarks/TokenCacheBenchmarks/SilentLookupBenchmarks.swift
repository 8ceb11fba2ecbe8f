import Benchmark
import Foundation
import TokenCache
@_spi(Benchmarking) import TokenCacheBenchmarking

// Cost independent of cache size (Docs/Semantics.md, "Access-token lookup and candidate order"): a silent-lookup hit
// with 1,000,000 access tokens in the store, against the same lookup with 10,000 and against the raw LMDB get +
// decrypt baseline (RawBaseline.swift) of the same run.
// The 1M store is populated once into a fixed directory and reused by later runs (see README, "Persistent 1M stores").

func silentLookupBenchmarks() {
    let lookupConfiguration = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal], timeUnits: .nanoseconds, warmupIterations: 200, maxDuration: .seconds(3),
        maxIterations: 200_000
    )

    // A hit at two sizes (the cost must not grow with the cache), and a refresh outcome (every summary of the
    // bucket opened and rejected) at 1M. A hit reads its companions (refresh token, ID token, account) on first
    // access by default; two more cases at 1M measure a hit whose companions are then read, and one that reads them
    // in the lookup's transaction (`companionLoading: .withLookup`). Three more split the 1M hit by what it walks:
    // buckets of one token (decided by the body alone), of several (summaries opened to pick one), and a query for
    // realm `common` answered from the home tenant's bucket (two bucket ranges).
    let lookupCases: [(name: String, accessTokens: Int, kind: LookupFixture.Expectation, companions: CompanionUse, shape: QueryShape)] = [
        ("silentLookup hit, 10000 ATs", 10_000, .hit, .notRead, .any),
        ("silentLookup hit, 1000000 ATs", 1_000_000, .hit, .notRead, .any),
        ("silentLookup hit, one-token buckets, 1000000 ATs", 1_000_000, .hit, .notRead, .oneTokenBuckets),
        ("silentLookup hit, buckets of several tokens, 1000000 ATs", 1_000_000, .hit, .notRead, .severalTokenBuckets),
        ("silentLookup hit, realm common, 1000000 ATs", 1_000_000, .hit, .notRead, .tenantlessRealm),
        ("silentLookup hit + companions read, 1000000 ATs", 1_000_000, .hit, .readAfter, .any),
        ("silentLookup hit, companions with lookup, 1000000 ATs", 1_000_000, .hit, .withLookup, .any),
        ("silentLookup refresh (no usable AT), 1000000 ATs", 1_000_000, .refresh, .notRead, .any),
    ]
    for lookupCase in lookupCases {
        let fixture = LookupFixture()
        Benchmark(
            lookupCase.name,
            configuration: lookupConfiguration,
            closure: { benchmark in
                let cache = fixture.cache!
                var cursor = fixture.cursor
                // The query is borrowed from the prepared array (as the raw baseline reads its key in place): an
                // `Array` subscript would copy it, retaining and releasing its five strings, in the measured time.
                try fixture.queries.withUnsafeBufferPointer { queries in
                    for _ in benchmark.scaledIterations {
                        let result = try cache.silentLookup(queries[cursor & (queries.count - 1)])
                        if lookupCase.companions == .readAfter { blackHole(try result.companions) }
                        blackHole(result)
                        cursor &+= 1
                    }
                }
                fixture.cursor = cursor
            },
            setup: {
                try fixture.open(accounts: lookupCase.accessTokens / LookupCorpus.accessTokensPerAccount)
                try fixture.prepareQueries(
                    lookupCase.kind, companionLoading: lookupCase.companions == .withLookup ? .withLookup : .onFirstAccess,
                    shape: lookupCase.shape
                )
            },
            teardown: { fixture.close() }
        )
    }

    // MARK: ingest

    // One refresh-grant token response of a signed-in account, from the JSON bytes: TokenResponse(json:) +
    // cache.ingest (derivation, intersect-delete of the AT it replaces, 5 puts, durable commit). The store stays at
    // 10,000 ATs (and 23,004 records): every response replaces an existing AT, RT, ID token, account and app metadata.
    for place in StorePlace.allCases {
        let fixture = LookupFixture()
        let responses = 4_096
        Benchmark(
            "ingest one token response, 10000 ATs\(place.suffix)",
            configuration: .init(
                metrics: [.wallClock, .mallocCountTotal], warmupIterations: 5, maxDuration: .seconds(3),
                maxIterations: responses
            ),
            closure: { benchmark in
                let cache = fixture.cache!, all = fixture.responses
                var cursor = fixture.cursor
                for _ in benchmark.scaledIterations {
                    let (json, context) = all[cursor % all.count]
                    blackHole(try cache.ingest(TokenResponse(json: json), context: context))
                    cursor &+= 1
                }
                fixture.cursor = cursor
            },
            setup: {
                let accounts = 10_000 / LookupCorpus.accessTokensPerAccount
                try fixture.open(accounts: accounts, in: place)
                let population = LookupCorpus.population(accounts: accounts)
                fixture.responses = (0..<responses).map { population.tokenResponse(number: $0) }
                // Sanity: a response replaces records, it adds none.
                try fixture.cache!.ingest(TokenResponse(json: fixture.responses[0].json), context: fixture.responses[0].context)
                fixture.cursor = 1
                let counts = try fixture.cache!.info().recordCounts
                guard counts == population.expectedCounts else {
                    fatalError("ingest setup: record counts changed to \(counts)")
                }
            },
            teardown: { fixture.close() }
        )
    }
}

/// What a lookup benchmark does with the companions of its result.
enum CompanionUse { case notRead, readAfter, withLookup }

/// Which stored combinations a lookup benchmark's queries are drawn from.
enum QueryShape {
    /// All of them, uniformly (the corpus's mix: 6 in 10 in buckets of one token).
    case any
    /// Those whose bucket holds one access token.
    case oneTokenBuckets
    /// Those whose bucket holds two or more.
    case severalTokenBuckets
    /// Tokens of the home tenant, asked for with realm `common`.
    case tenantlessRealm
}

// MARK: - Fixture

final class LookupFixture: @unchecked Sendable {
    /// The store of 1,000,000 ATs (100,000 accounts) is kept between runs.
    static let persistentAccounts = 100_000

    var directory: String?
    var persistent = false
    var cache: TokenStore?
    var accounts = 0
    var queries: [SilentLookupQuery] = []
    var responses: [(json: [UInt8], context: TokenRequestContext)] = []
    var cursor = 0

    enum Expectation { case hit, refresh }

    func open(accounts: Int, in place: StorePlace = .temporaryDirectory) throws {
        self.accounts = accounts
        if accounts == Self.persistentAccounts {
            persistent = true
            let root = PersistentStores.root(default: "/tmp/tc-bench-1m", variable: "TC_BENCH_1M_DIR")
            directory = root
            cache = try LookupCorpus.openPersistent(root: root, accounts: accounts)
            PersistentStores.warmPageCache(directory: root + "/store")
        } else {
            let base = place.root + "/token-cache-bench-\(UUID().uuidString)"
            directory = base
            try KeyFile.create(at: base + "/key")
            let cache = try TokenStore.create(LookupCorpus.configuration(base: base))
            try LookupCorpus.populate(cache, accounts: accounts)
            self.cache = cache
        }
    }

    /// 16,384 queries drawn uniformly from the stored (account, client, realm, AT) combinations of `shape`; each one
    /// is run once here and must give the expected outcome.
    func prepareQueries(_ expectation: Expectation, companionLoading: CompanionLoading = .onFirstAccess, shape: QueryShape = .any) throws {
        let cache = cache!
        let population = LookupCorpus.population(accounts: accounts)
        queries = (0..<(8 * Fixture.probeCount)).lazy.compactMap { i -> SilentLookupQuery? in
            let account = Int(SyntheticPopulation.mix(UInt64(i) &+ 0x51E7) % UInt64(self.accounts))
            let slot = Int(SyntheticPopulation.mix(UInt64(i) &+ 0x5107) % UInt64(LookupCorpus.accessTokensPerAccount))
            let bucket = population.bucket(account: account, slot: slot)
            let bucketSize = population.bucketSize(account: account, slot: slot)
            switch shape {
            case .any: break
            case .oneTokenBuckets: guard bucketSize == 1 else { return nil }
            case .severalTokenBuckets: guard bucketSize > 1 else { return nil }
            case .tenantlessRealm: guard SyntheticPopulation.realmIndex(bucket: bucket) == 0 else { return nil }
            }
            var query =
                switch expectation {
                case .hit: population.hitQuery(account: account, slot: slot, number: i, companionLoading: companionLoading)
                case .refresh: population.refreshQuery(account: account, slot: slot, companionLoading: companionLoading)
                }
            if shape == .tenantlessRealm { query.realm = "common" }
            return query
        }.prefix(Fixture.probeCount).map { $0 }
        precondition(queries.count == Fixture.probeCount, "silentLookup setup: too few queries of shape \(shape)")
        for (i, query) in queries.enumerated() {
            let result = try cache.silentLookup(query)
            let companions = try result.companions
            let clean = try result.corrupt.isEmpty
            let ok: Bool
            switch expectation {
            case .hit:
                ok = result.outcome == .hit && result.accessToken?.entity.target.contains(query.scopes[0]) == true
                    && companions.refreshToken != nil && companions.idToken != nil && companions.account != nil
                    && clean
            case .refresh:
                ok = result.outcome == .refresh && result.accessToken == nil && companions.refreshToken != nil
                    && companions.idToken != nil && companions.account != nil && clean
            }
            guard ok else {
                fatalError(
                    "silentLookup setup: query \(i) expected \(expectation), got \(result.outcome) (AT \(result.accessToken != nil), RT \(companions.refreshToken != nil), IDT \(companions.idToken != nil), account \(companions.account != nil), corrupt \(companions.corrupt.count))"
                )
            }
        }
    }

    func close() {
        cache = nil
        if !persistent, let directory { try? FileManager.default.removeItem(atPath: directory) }
    }
}

// MARK: - Persistent stores

enum PersistentStores {
    static func root(default path: String, variable: String) -> String {
        ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 } ?? path
    }

    /// Reads every file under `directory` once, so the measured lookups hit the page cache (as on a machine that
    /// has just populated the store) even after a reboot or a drop of the caches.
    static func warmPageCache(directory: String) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let chunk = 16 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 4096)
        defer { buffer.deallocate() }
        for name in names {
            let fd = Foundation.open(directory + "/" + name, O_RDONLY)
            guard fd >= 0 else { continue }
            while read(fd, buffer, chunk) > 0 {}
            close(fd)
        }
    }
}

// MARK: - The lookup corpus

/// The silent-lookup and ingest benchmarks' stores hold `SyntheticPopulation` (TokenCache, SPI `Benchmarking`), the
/// one generator `cachetool bench` uses too: its `default` profile, seed 0. See its documentation for the
/// distribution (per account: 10 access tokens over 8 buckets, 2 realms, 4 clients, 3 refresh tokens, 8 ID tokens).
enum LookupCorpus {
    /// Bumped whenever what `populate` writes changes: a persistent store of another version is rebuilt. v2: stores
    /// of format version 2 (written fresh, not upgraded from version 1, so the page layout is what writers produce).
    static let version = "v2"
    static let accessTokensPerAccount = 10

    static func population(accounts: Int) -> SyntheticPopulation { SyntheticPopulation(accounts: accounts) }

    static func configuration(base: String) -> Configuration {
        var configuration = Configuration(directory: base + "/store", keySource: .keyFile(path: base + "/key"))
        configuration.initialMapSize = 8 << 30  // no map growth while populating 1M ATs (~5 GB)
        configuration.maximumMapSize = 16 << 30
        return configuration
    }

    /// Fills an empty store with `accounts` accounts, ~20,000 records (900 accounts) per durable write transaction.
    static func populate(_ cache: TokenStore, accounts: Int) throws {
        try population(accounts: accounts).populate(cache, recordsPerTransaction: 900 * 23)
    }

    /// The persistent store under `root` (`root/key`, `root/store`), populated first if it is missing, incomplete,
    /// of another corpus version or of other counts.
    static func openPersistent(root: String, accounts: Int) throws -> TokenStore {
        let marker = root + "/complete-" + version
        let configuration = configuration(base: root)
        if FileManager.default.fileExists(atPath: marker), let cache = try? TokenStore.open(configuration),
            (try? cache.info().recordCounts) == population(accounts: accounts).expectedCounts
        {
            return cache
        }
        try? FileManager.default.removeItem(atPath: root)
        FileHandle.standardError.write(Data("populating the persistent store \(root) (\(accounts) accounts)…\n".utf8))
        let started = Date()
        try KeyFile.create(at: root + "/key")
        let cache = try TokenStore.create(configuration)
        try populate(cache, accounts: accounts)
        let seconds = Date().timeIntervalSince(started)
        let info = try cache.info()
        let note = "accounts \(accounts), records \(info.recordCounts.values.reduce(0, +)), populated in \(String(format: "%.1f", seconds)) s, used \(info.usedBytes) bytes\n"
        try note.write(toFile: marker, atomically: true, encoding: .utf8)
        FileHandle.standardError.write(Data(("done: " + note).utf8))
        return cache
    }
}
