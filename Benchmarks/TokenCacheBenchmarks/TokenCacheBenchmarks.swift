import Benchmark
import Foundation
import TokenCache

// Every benchmark runs in its own process (package-benchmark's model), so each one builds the stores it needs in
// its `setup` hook, outside the measured region, in a fresh temporary directory that `teardown` removes.
// Inputs (keys, entities) are generated up front from a seeded generator, so runs are repeatable and the measured
// closures only index into prepared arrays. Only the public API of `TokenStore` is used.

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
            setup: { try fixture.populated(accounts: count / Corpus.accessTokensPerAccount) },
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
            setup: { try fixture.populated(accounts: count / Corpus.accessTokensPerAccount) },
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
            setup: { try fixture.populated(accounts: 100_000 / Corpus.accessTokensPerAccount) },
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
                try fixture.populated(accounts: 10_000 / Corpus.accessTokensPerAccount, in: place)
                // New secrets for existing keys: the store stays at 10,000 records (an AT refresh replaces its record).
                fixture.replacementTokens = (0..<replacements).map { i in
                    let index = Int(Corpus.mix(UInt64(i) &+ 0xABCD) % 10_000)
                    var token = Corpus.accessToken(account: index / Corpus.accessTokensPerAccount, slot: index % Corpus.accessTokensPerAccount)
                    token.secret = Corpus.secret(seed: UInt64(i) &+ 77, length: 1_536)
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
                try fixture.populated(accounts: 10_000 / Corpus.accessTokensPerAccount, in: place)
                // Sign-ins of accounts not yet in the store (account numbers after the populated ones).
                fixture.responses = (0..<responses).map { Corpus.tokenResponse(account: 1_000_000 + $0) }
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
                    precondition(list.records.count == Corpus.accessTokensPerAccount)
                    blackHole(list)
                    cursor &+= 1
                }
                fixture.cursor = cursor
            },
            setup: {
                let accounts = 100_000 / Corpus.accessTokensPerAccount
                try fixture.populated(accounts: accounts)
                fixture.accountFilters = (0..<Fixture.probeCount).map { i in
                    RecordFilter(homeAccountID: Corpus.homeAccountID(Int(Corpus.mix(UInt64(i) &+ 5) % UInt64(accounts))))
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
                try fixture.populated(accounts: 10_000 / Corpus.accessTokensPerAccount)
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
    var responses: [Corpus.TokenResponse] = []
    var accountFilters: [RecordFilter] = []
    /// Where the next iteration continues, so no input repeats until the list wraps.
    var cursor = 0


    /// A new store in a new temporary directory with `accounts` × 10 access tokens (plus, per account, the
    /// Account, RefreshToken and IdToken records a sign-in writes, and one AppMetadata per client), written in
    /// batches of 10,000 records per durable transaction.
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

        let batchAccounts = 10_000 / Corpus.accessTokensPerAccount
        var first = 0
        while first < accounts {
            let range = first..<min(first + batchAccounts, accounts)
            let tokens = range.flatMap { account in
                (0..<Corpus.accessTokensPerAccount).map { Corpus.accessToken(account: account, slot: $0) }
            }
            let others = range.map { Corpus.tokenResponse(account: $0) }
            try cache.write { writer in
                for token in tokens { try writer.put(token) }
                for response in others {
                    try writer.put(response.account)
                    try writer.put(response.refreshToken)
                    try writer.put(response.idToken)
                }
            }
            first = range.upperBound
        }
        try cache.write { writer in
            for client in Corpus.clientIDs {
                try writer.put(AppMetadata(clientID: client, environment: Corpus.environment, familyID: "1"))
            }
        }

        let total = accounts * Corpus.accessTokensPerAccount
        probeKeys = (0..<Self.probeCount).map { i in
            let index = Int(Corpus.mix(UInt64(i)) % UInt64(total))
            return Corpus.accessToken(account: index / Corpus.accessTokensPerAccount, slot: index % Corpus.accessTokensPerAccount).key
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

// MARK: - Realistic, deterministic records

enum Corpus {
    static let accessTokensPerAccount = 10
    static let environment = "login.microsoftonline.com"

    /// A few first-party-style client ids; every account has tokens for several of them.
    static let clientIDs = (0..<4).map { guid(seed: 0xC11E_0000 &+ UInt64($0)) }

    static let scopeVocabulary: [String] = [
        "User.Read", "User.ReadBasic.All", "Mail.Read", "Mail.Send", "Calendars.Read", "Calendars.ReadWrite",
        "Files.Read", "Files.ReadWrite", "Contacts.Read", "People.Read", "Sites.Read.All", "Tasks.ReadWrite",
        "Notes.Read", "Chat.Read", "Team.ReadBasic.All", "Presence.Read", "Group.Read.All", "Directory.Read.All",
        "MailboxSettings.Read", "OnlineMeetings.Read",
    ].map { "https://graph.microsoft.com/" + $0 }

    /// SplitMix64: a fixed, fast mixing function for repeatable data.
    static func mix(_ seed: UInt64) -> UInt64 {
        var z = seed &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    static func guid(seed: UInt64) -> String {
        let a = mix(seed), b = mix(a)
        func hex(_ value: UInt64, _ digits: Int) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: max(0, digits - text.count)) + text.suffix(digits)
        }
        return "\(hex(a >> 32, 8))-\(hex((a >> 16) & 0xFFFF, 4))-\(hex(a & 0xFFFF, 4))-\(hex(b >> 48, 4))-\(hex(b & 0xFFFF_FFFF_FFFF, 12))"
    }

    static func objectID(_ account: Int) -> String { guid(seed: UInt64(account) &* 2 &+ 1_000_003) }
    static func tenantID(_ account: Int) -> String { guid(seed: UInt64(account % 97) &+ 7_000_000) }
    /// `<oid>.<tid>`, as AAD accounts have.
    static func homeAccountID(_ account: Int) -> String { objectID(account) + "." + tenantID(account) }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// 64 KiB of base64url characters, sliced into JWT-shaped secrets.
    private static let pool: [UInt8] = (0..<(64 << 10)).map { alphabet[Int(mix(UInt64($0) &+ 0x5EC) & 63)] }

    static func secret(seed: UInt64, length: Int) -> Secret {
        let start = Int(mix(seed) % UInt64(pool.count - length))
        var bytes = Array("eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.".utf8)
        bytes += pool[start..<(start + length - bytes.count)]
        return Secret(bytes: bytes)
    }

    /// 2 to 5 scopes; different slots of one account get different clients and scope sets.
    static func target(account: Int, slot: Int) -> String {
        let count = 2 + (account &+ slot) % 4
        let first = (slot * 2 + account) % scopeVocabulary.count
        return (0..<count).map { scopeVocabulary[(first + $0 * 3) % scopeVocabulary.count] }.joined(separator: " ")
    }

    static func accessToken(account: Int, slot: Int) -> AccessToken {
        let now: Int64 = 1_790_000_000
        return AccessToken(
            homeAccountID: homeAccountID(account), environment: environment,
            clientID: clientIDs[slot % clientIDs.count], realm: tenantID(account), target: target(account: account, slot: slot),
            secret: secret(seed: UInt64(account) &* 16 &+ UInt64(slot), length: 1_400 + (account &+ slot) % 200),
            cachedAt: now, expiresOn: now + 4_000, extendedExpiresOn: now + 8_000, refreshOn: now + 2_000
        )
    }

    struct TokenResponse: Sendable {
        var account: Account
        var accessToken: AccessToken
        var refreshToken: RefreshToken
        var idToken: IDToken
        var appMetadata: AppMetadata
    }

    /// What one interactive sign-in writes.
    static func tokenResponse(account: Int) -> TokenResponse {
        let home = homeAccountID(account), tenant = tenantID(account), client = clientIDs[account % clientIDs.count]
        let seed = UInt64(account) &* 16
        return TokenResponse(
            account: Account(
                homeAccountID: home, environment: environment, realm: tenant, localAccountID: objectID(account),
                username: "user\(account)@contoso.example", authorityType: "MSSTS", name: "User \(account)",
                clientInfo: "eyJ1aWQiOiIx" + String(account, radix: 36)
            ),
            accessToken: accessToken(account: account, slot: 0),
            refreshToken: RefreshToken(
                homeAccountID: home, environment: environment, clientID: client,
                secret: secret(seed: seed &+ 11, length: 900), familyID: "1",
                target: target(account: account, slot: 0) + " offline_access openid profile", lastModificationTime: 1_790_000_000
            ),
            idToken: IDToken(
                homeAccountID: home, environment: environment, clientID: client, realm: tenant,
                secret: secret(seed: seed &+ 12, length: 1_200)
            ),
            appMetadata: AppMetadata(clientID: client, environment: environment, familyID: "1")
        )
    }
}
