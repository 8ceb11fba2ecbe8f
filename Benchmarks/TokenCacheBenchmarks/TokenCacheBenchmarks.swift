import Benchmark
import Foundation
import TokenCache
@_spi(Benchmarking) import TokenCacheBenchmarking

// Every benchmark runs in its own process (package-benchmark's model), so each one builds the stores it needs in
// its `setup` hook, outside the measured region, in a fresh temporary directory that `teardown` removes.
// Inputs (keys, entities) are generated up front from a seeded generator, so runs are repeatable and the measured
// closures only index into prepared arrays. The stores hold `SyntheticPopulation` (TokenCache, SPI `Benchmarking`),
// the one generator `cachetool bench` uses too; apart from it, only the public API of `TokenStore` is used.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        warmupIterations: 10,
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )

    // MARK: 1. get + decrypt, hit

    for count in [10_000, 100_000] {
        let fixture = Fixture()
        Benchmark(
            "get+decrypt AT hit, \(count) records",
            closure: { benchmark in
                let cache = fixture.cache!, keys = fixture.probeKeys
                var cursor = fixture.cursor
                for _ in benchmark.scaledIterations {
                    blackHole(try cache.get(keys[cursor & (keys.count - 1)]))
                    cursor &+= 1
                }
                fixture.cursor = cursor
            },
            setup: { try fixture.populated(accounts: count / LookupCorpus.accessTokensPerAccount) },
            teardown: { fixture.remove() }
        )
    }

    // The same lookups, 1,000 per read transaction: the per-transaction cost amortized away.
    // With scalingFactor .kilo the tool reports the metrics marked `*` (wall clock, mallocs) per get.
    for count in [10_000, 100_000] {
        let fixture = Fixture()
        Benchmark(
            "read{get} x1000 / 1000, \(count) records",
            configuration: .init(
                metrics: [.wallClock, .mallocCountTotal], warmupIterations: 2, scalingFactor: .kilo,
                maxDuration: .seconds(2), maxIterations: 1_000
            ),
            closure: { benchmark in
                let cache = fixture.cache!, keys = fixture.probeKeys
                var cursor = fixture.cursor
                try cache.read { reader in
                    for _ in benchmark.scaledIterations {
                        blackHole(try reader.get(keys[cursor & (keys.count - 1)]))
                        cursor &+= 1
                    }
                }
                fixture.cursor = cursor
            },
            setup: { try fixture.populated(accounts: count / LookupCorpus.accessTokensPerAccount) },
            teardown: { fixture.remove() }
        )
    }

    // MARK: 2. get, miss

    do {
        let fixture = Fixture()
        Benchmark(
            "get miss, 100000 records",
            closure: { benchmark in
                let cache = fixture.cache!, keys = fixture.missKeys
                var cursor = fixture.cursor
                for _ in benchmark.scaledIterations {
                    blackHole(try cache.get(keys[cursor & (keys.count - 1)]))
                    cursor &+= 1
                }
                fixture.cursor = cursor
            },
            setup: { try fixture.populated(accounts: 100_000 / LookupCorpus.accessTokensPerAccount) },
            teardown: { fixture.remove() }
        )
    }

    // MARK: 3. one durable put

    // On ext4 (the temporary directory) the commit's two fsyncs dominate; the same benchmark on tmpfs
    // (/dev/shm, where fsync returns at once) shows the CPU cost of the write path alone.
    for place in StorePlace.allCases {
        let fixture = Fixture()
        let replacements = 4_096
        Benchmark(
            "put durable single record, 10000 records\(place.suffix)",
            configuration: .init(
                metrics: [.wallClock, .mallocCountTotal], warmupIterations: 5, maxDuration: .seconds(3),
                maxIterations: replacements
            ),
            closure: { benchmark in
                let cache = fixture.cache!, tokens = fixture.replacementTokens
                var cursor = fixture.cursor
                for _ in benchmark.scaledIterations {
                    blackHole(try cache.put(tokens[cursor % tokens.count]))
                    cursor &+= 1
                }
                fixture.cursor = cursor
            },
            setup: {
                try fixture.populated(accounts: 10_000 / LookupCorpus.accessTokensPerAccount, in: place)
                // New secrets for existing keys: the store stays at 10,000 records (an AT refresh replaces its record).
                fixture.replacementTokens = (0..<replacements).map { i in
                    let index = Int(SyntheticPopulation.mix(UInt64(i) &+ 0xABCD) % 10_000)
                    let (account, slot) = fixture.population!.location(ofToken: index)
                    var token = fixture.population!.accessToken(account: account, slot: slot)
                    token.secret = SyntheticPopulation.secret(seed: UInt64(i) &+ 77, length: 1_536)
                    token.cachedAt += 3_600
                    token.expiresOn += 3_600
                    return token
                }
            },
            teardown: { fixture.remove() }
        )
    }

    // MARK: 4. one token response

    for place in StorePlace.allCases {
        let fixture = Fixture()
        let responses = 4_096
        Benchmark(
            "write token response (5 records, one txn), 10000 records\(place.suffix)",
            configuration: .init(
                metrics: [.wallClock, .mallocCountTotal], warmupIterations: 5, maxDuration: .seconds(3),
                maxIterations: responses
            ),
            closure: { benchmark in
                let cache = fixture.cache!, all = fixture.responses
                var cursor = fixture.cursor
                for _ in benchmark.scaledIterations {
                    let response = all[cursor % all.count]
                    blackHole(
                        try cache.write { writer in
                            try writer.put(response.account)
                            try writer.put(response.accessToken)
                            try writer.put(response.refreshToken)
                            try writer.put(response.idToken)
                            return try writer.put(response.appMetadata)
                        }
                    )
                    cursor &+= 1
                }
                fixture.cursor = cursor
            },
            setup: {
                try fixture.populated(accounts: 10_000 / LookupCorpus.accessTokensPerAccount, in: place)
                // Sign-ins of accounts not yet in the store (account numbers after the populated ones).
                fixture.responses = (0..<responses).map { SignIn(fixture.population!, account: 1_000_000 + $0) }
            },
            teardown: { fixture.remove() }
        )
    }

    // MARK: 5. list by account

    do {
        let fixture = Fixture()
        Benchmark(
            "list ATs by account (10 per account), 100000 records",
            configuration: .init(
                metrics: [.wallClock, .mallocCountTotal], warmupIterations: 10, maxDuration: .seconds(2),
                maxIterations: 20_000
            ),
            closure: { benchmark in
                let cache = fixture.cache!, filters = fixture.accountFilters
                var cursor = fixture.cursor
                for _ in benchmark.scaledIterations {
                    let list = try cache.list(AccessToken.self, filter: filters[cursor & (filters.count - 1)])
                    precondition(list.records.count == LookupCorpus.accessTokensPerAccount)
                    blackHole(list)
                    cursor &+= 1
                }
                fixture.cursor = cursor
            },
            setup: {
                let accounts = 100_000 / LookupCorpus.accessTokensPerAccount
                try fixture.populated(accounts: accounts)
                fixture.accountFilters = (0..<Fixture.probeCount).map { i in
                    RecordFilter(homeAccountID: fixture.population!.account(Int(SyntheticPopulation.mix(UInt64(i) &+ 5) % UInt64(accounts))).homeAccountID)
                }
            },
            teardown: { fixture.remove() }
        )
    }

    // MARK: 6. open

    // TokenStore.open of an existing store with a key file, in two situations:
    // - no instance of it is open in this process: the process-wide registry holds environments weakly, so dropping
    //   the previous instance closes its MDB_env (outside the measured region) and every iteration opens a new one:
    //   filesystem and permission checks, mdb_env_open + mmap, opening the databases, reading and checking the key
    //   file, unwrapping the data key. Files are in the page cache ("cold in process", not cold from disk).
    // - another instance is open: the registry returns the live environment, but the key file is still read, the
    //   data key unwrapped and the subkeys derived on every call.
    // Releasing the new instance (closing, freeing its keys) is not measured in either case.
    for keepOpen in [false, true] {
        let fixture = Fixture()
        Benchmark(
            keepOpen ? "open store (already open in process), 10000 records" : "open store (not open in process), 10000 records",
            configuration: .init(
                metrics: [.wallClock, .mallocCountTotal], warmupIterations: 5, maxDuration: .seconds(2),
                maxIterations: 10_000
            ),
            closure: { benchmark in
                for _ in benchmark.scaledIterations {
                    let cache = try TokenStore.open(fixture.configuration!)
                    benchmark.stopMeasurement()
                    blackHole(cache)
                }
            },
            setup: {
                try fixture.populated(accounts: 10_000 / LookupCorpus.accessTokensPerAccount)
                if !keepOpen { fixture.cache = nil }  // the store must not stay open
            },
            teardown: { fixture.remove() }
        )
    }

    // MARK: 7. silent lookup, ingest (SilentLookupBenchmarks.swift) and the raw baseline (RawBaseline.swift)

    silentLookupBenchmarks()
    rawBaselineBenchmarks()
}

// MARK: - Fixture

/// The state of one benchmark: its store and its prepared inputs. Set in `setup`, read by the measured closure;
/// package-benchmark runs setup, iterations and teardown one after another on one benchmark.
final class Fixture: @unchecked Sendable {
    /// A power of two, so the closures can wrap with a mask.
    static let probeCount = 1 << 14

    var directory: String?
    var configuration: Configuration?
    var cache: TokenStore?
    var probeKeys: [AccessToken.Key] = []
    var missKeys: [AccessToken.Key] = []
    var replacementTokens: [AccessToken] = []
    var responses: [SignIn] = []
    var population: SyntheticPopulation?
    var accountFilters: [RecordFilter] = []
    /// Where the next iteration continues, so no input repeats until the list wraps.
    var cursor = 0


    /// A new store in a new temporary directory holding the synthetic population of `accounts` accounts (× 10
    /// access tokens, plus per account 2 Accounts, 3 RefreshTokens and 8 IdTokens, and one AppMetadata per client),
    /// written in batches of about 10,000 records per durable transaction.
    func populated(accounts: Int, in place: StorePlace = .temporaryDirectory) throws {
        let base = place.root + "/token-cache-bench-\(UUID().uuidString)"
        directory = base
        try KeyFile.create(at: base + "/key")
        var configuration = Configuration(directory: base + "/store", keySource: .keyFile(path: base + "/key"))
        configuration.initialMapSize = 1 << 30  // no map growth while populating
        configuration.maximumMapSize = 8 << 30
        self.configuration = configuration
        let cache = try TokenStore.create(configuration)
        self.cache = cache

        let population = SyntheticPopulation(accounts: accounts)
        self.population = population
        try population.populate(cache)

        let total = population.accessTokens
        probeKeys = (0..<Self.probeCount).map { i in
            let (account, slot) = population.location(ofToken: Int(SyntheticPopulation.mix(UInt64(i)) % UInt64(total)))
            return population.accessToken(account: account, slot: slot).key
        }
        // Misses next to real data: a stored account and client, scopes no stored token has.
        missKeys = probeKeys.enumerated().map { i, key in
            var key = key
            key.target = "https://graph.microsoft.com/Files.ReadWrite.All https://graph.microsoft.com/Sites.Manage.\(i)"
            return key
        }
        // Sanity: the inputs are what the names say.
        let hit = try cache.get(probeKeys[0]), miss = try cache.get(missKeys[0])
        let stored = try cache.read { try $0.counts()[.accessToken] }
        precondition(hit != nil && miss == nil && stored == total)
    }

    func remove() {
        cache = nil
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }
}

/// Where a benchmark's store lives.
enum StorePlace: CaseIterable {
    /// `FileManager.default.temporaryDirectory` (`$TMPDIR`, else /tmp): a disk, so fsync is real.
    case temporaryDirectory
    /// /dev/shm: tmpfs, where fsync costs nothing; isolates the CPU cost of writes.
    case tmpfs

    var root: String {
        switch self {
        case .temporaryDirectory: FileManager.default.temporaryDirectory.path
        case .tmpfs: "/dev/shm"
        }
    }

    var suffix: String {
        switch self {
        case .temporaryDirectory: ""
        case .tmpfs: " (tmpfs)"
        }
    }
}

// MARK: - Sign-ins

/// What one interactive sign-in of an account not in the store writes: its home-realm Account, one access token,
/// its first refresh token and ID token, and the client's app metadata.
struct SignIn: Sendable {
    var account: Account
    var accessToken: AccessToken
    var refreshToken: RefreshToken
    var idToken: IDToken
    var appMetadata: AppMetadata

    init(_ population: SyntheticPopulation, account index: Int) {
        let companions = population.companions(account: index)
        account = companions.accounts[0]
        accessToken = population.accessToken(account: index, slot: 0)
        refreshToken = companions.refreshTokens[0]
        idToken = companions.idTokens[0]
        appMetadata = SyntheticPopulation.appMetadata[0]
    }
}
