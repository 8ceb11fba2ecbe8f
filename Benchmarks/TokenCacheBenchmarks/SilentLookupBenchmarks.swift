import Benchmark
import Foundation
import TokenCache

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
                fixture.responses = (0..<responses).map { LookupCorpus.tokenResponse(number: $0, accounts: accounts) }
                // Sanity: a response replaces records, it adds none.
                try fixture.cache!.ingest(TokenResponse(json: fixture.responses[0].json), context: fixture.responses[0].context)
                fixture.cursor = 1
                let counts = try fixture.cache!.info().recordCounts
                guard counts == LookupCorpus.expectedCounts(accounts: accounts) else {
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
        queries = (0..<(8 * Fixture.probeCount)).lazy.compactMap { i -> SilentLookupQuery? in
            let account = Int(Corpus.mix(UInt64(i) &+ 0x51E7) % UInt64(self.accounts))
            let slot = Int(Corpus.mix(UInt64(i) &+ 0x5107) % UInt64(LookupCorpus.accessTokensPerAccount))
            let info = LookupCorpus.account(account)
            let bucket = LookupCorpus.bucket(account: account, slot: slot)
            let bucketSize = (0..<LookupCorpus.accessTokensPerAccount).count { LookupCorpus.bucket(account: account, slot: $0) == bucket }
            switch shape {
            case .any: break
            case .oneTokenBuckets: guard bucketSize == 1 else { return nil }
            case .severalTokenBuckets: guard bucketSize > 1 else { return nil }
            case .tenantlessRealm: guard LookupCorpus.realmIndex(bucket: bucket) == 0 else { return nil }
            }
            let scopes = LookupCorpus.scopes(account: account, slot: slot)
            let scope =
                switch expectation {
                case .hit: scopes[Int(Corpus.mix(UInt64(i) &+ 0x5C0) % UInt64(scopes.count))]
                case .refresh: LookupCorpus.resource(slot) + "/uncached"
                }
            return SilentLookupQuery(
                clientID: LookupCorpus.clientIDs[LookupCorpus.clientIndex(bucket: bucket)],
                homeAccountID: info.homeAccountID, environment: LookupCorpus.environment,
                realm: shape == .tenantlessRealm ? "common" : info.realms[LookupCorpus.realmIndex(bucket: bucket)], scopes: [scope],
                now: LookupCorpus.queryNow, companionLoading: companionLoading
            )
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

/// Realistic, deterministic contents for the silent-lookup and ingest benchmarks. Per account (23 records):
/// * home account id `<oid>.<home tenant>`; two realms: the home tenant and one guest tenant (tenants drawn from
///   1,009 GUIDs); one Account record per realm;
/// * 10 access tokens over the 8 buckets (4 clients × 2 realms): slots 0–7 one per bucket, slots 8 and 9 in two
///   buckets chosen per account (the same one for 1/8 of accounts), so a bucket holds 1–3 tokens. Slot `s` holds
///   1–3 scopes of resource `https://res<s>.example` (`read`, `write`, `admin`): disjoint sets within a bucket.
///   Secrets are JWT-shaped, 1,000–1,080 bytes; a record is at most ~1,890 bytes (inline in LMDB);
/// * one family refresh token (family "1", written by client 0) and one own refresh token for each of the two
///   non-family clients (2 and 3: their silent flows need one);
/// * one ID token per (client, realm): 8, secrets 1,100–1,299 bytes.
/// Plus one AppMetadata per client (clients 0 and 1 in family "1", 2 and 3 in none).
enum LookupCorpus {
    /// Bumped whenever what `populate` writes changes: a persistent store of another version is rebuilt. v2: stores
    /// of format version 2 (written fresh, not upgraded from version 1, so the page layout is what writers produce).
    static let version = "v2"
    static let accessTokensPerAccount = 10
    static let environment = "login.microsoftonline.com"
    /// The tokens' `cached_at`; `queryNow` is 10 minutes later: before refresh_on, an hour before expiry.
    static let cachedAt: Int64 = 1_790_000_000
    static let queryNow = cachedAt + 600
    static let clientIDs = (0..<4).map { Corpus.guid(seed: 0x5EC1_0000 &+ UInt64($0)) }
    static let familyClientCount = 2
    static let tenantCount = 1_009
    static let permissions = ["read", "write", "admin"]

    static func expectedCounts(accounts: Int) -> [EntityKind: Int] {
        [.accessToken: 10 * accounts, .account: 2 * accounts, .refreshToken: 3 * accounts, .idToken: 8 * accounts, .appMetadata: 4]
    }

    static func configuration(base: String) -> Configuration {
        var configuration = Configuration(directory: base + "/store", keySource: .keyFile(path: base + "/key"))
        configuration.initialMapSize = 8 << 30  // no map growth while populating 1M ATs (~5 GB)
        configuration.maximumMapSize = 16 << 30
        return configuration
    }

    struct AccountInfo {
        var objectID: String
        var homeAccountID: String
        /// Home tenant, then a guest tenant.
        var realms: [String]
    }

    static func tenant(_ index: Int) -> String { Corpus.guid(seed: UInt64(index) &+ 0x7E7A_0000) }

    static func account(_ index: Int) -> AccountInfo {
        let objectID = Corpus.guid(seed: UInt64(index) &* 2 &+ 0xACC0_0000)
        let home = index % tenantCount
        var guest = Int(Corpus.mix(UInt64(index) &+ 0x6E57) % UInt64(tenantCount))
        if guest == home { guest = (guest + 1) % tenantCount }
        return AccountInfo(objectID: objectID, homeAccountID: objectID + "." + tenant(home), realms: [tenant(home), tenant(guest)])
    }

    /// Bucket 0–7 of an account's AT slot: client `bucket % 4`, realm `bucket / 4`.
    static func bucket(account: Int, slot: Int) -> Int {
        switch slot {
        case 0..<8: slot
        case 8: account % 8
        default: (account / 8 + 3) % 8
        }
    }
    static func clientIndex(bucket: Int) -> Int { bucket % 4 }
    static func realmIndex(bucket: Int) -> Int { bucket / 4 }

    static func resource(_ slot: Int) -> String { "https://res\(slot).example" }

    static func scopes(account: Int, slot: Int) -> [String] {
        let count = 1 + (account &+ slot) % 3
        let first = (account / 3 &+ slot) % permissions.count
        return (0..<count).map { resource(slot) + "/" + permissions[(first + $0) % permissions.count] }
    }

    static func accessToken(_ info: AccountInfo, account: Int, slot: Int) -> AccessToken {
        let bucket = bucket(account: account, slot: slot)
        let seed = UInt64(account) &* 64 &+ UInt64(slot)
        return AccessToken(
            homeAccountID: info.homeAccountID, environment: environment, clientID: clientIDs[clientIndex(bucket: bucket)],
            realm: info.realms[realmIndex(bucket: bucket)], target: scopes(account: account, slot: slot).joined(separator: " "),
            secret: Corpus.secret(seed: seed, length: 1_000 + Int(Corpus.mix(seed &+ 0xA7) % 81)),
            cachedAt: cachedAt, expiresOn: cachedAt + 3_599, extendedExpiresOn: cachedAt + 7_199, refreshOn: cachedAt + 1_800
        )
    }

    static func clientInfo(_ info: AccountInfo) -> String {
        base64url(Array(#"{"uid":"\#(info.objectID)","utid":"\#(info.realms[0])"}"#.utf8))
    }

    /// Everything one account has in the store, in one batch of puts.
    static func put(account index: Int, into writer: CacheWriter) throws {
        let info = account(index)
        for slot in 0..<accessTokensPerAccount { try writer.put(accessToken(info, account: index, slot: slot)) }
        let seed = UInt64(index) &* 64 &+ 32
        for (r, realm) in info.realms.enumerated() {
            try writer.put(
                Account(
                    homeAccountID: info.homeAccountID, environment: environment, realm: realm, localAccountID: info.objectID,
                    username: "user\(index)@contoso\(index % tenantCount).example", authorityType: "MSSTS",
                    accountSource: "authorization_code", name: "User \(index)", clientInfo: clientInfo(info)
                )
            )
            for client in 0..<clientIDs.count {
                let idSeed = seed &+ UInt64(r * 8 + client)
                try writer.put(
                    IDToken(
                        homeAccountID: info.homeAccountID, environment: environment, clientID: clientIDs[client], realm: realm,
                        secret: Corpus.secret(seed: idSeed, length: 1_100 + Int(Corpus.mix(idSeed) % 200))
                    )
                )
            }
        }
        for client in [0] + Array(familyClientCount..<clientIDs.count) {
            let rtSeed = seed &+ 20 &+ UInt64(client)
            try writer.put(
                RefreshToken(
                    homeAccountID: info.homeAccountID, environment: environment, clientID: clientIDs[client],
                    secret: Corpus.secret(seed: rtSeed, length: 1_000 + Int(Corpus.mix(rtSeed) % 100)),
                    familyID: client < familyClientCount ? "1" : nil, target: "openid profile offline_access",
                    lastModificationTime: cachedAt
                )
            )
        }
    }

    /// Fills an empty store with `accounts` accounts, ~20,000 records per durable write transaction.
    static func populate(_ cache: TokenStore, accounts: Int) throws {
        let batch = 900  // × 23 records
        var first = 0
        while first < accounts {
            let range = first..<min(first + batch, accounts)
            try cache.write { writer in
                for index in range { try put(account: index, into: writer) }
            }
            first = range.upperBound
        }
        try cache.write { writer in
            for (client, id) in clientIDs.enumerated() {
                try writer.put(AppMetadata(clientID: id, environment: environment, familyID: client < familyClientCount ? "1" : nil))
            }
        }
        let counts = try cache.info().recordCounts
        guard counts == expectedCounts(accounts: accounts) else { fatalError("populate: unexpected record counts \(counts)") }
    }

    /// The persistent store under `root` (`root/key`, `root/store`), populated first if it is missing, incomplete,
    /// of another corpus version or of other counts.
    static func openPersistent(root: String, accounts: Int) throws -> TokenStore {
        let marker = root + "/complete-" + version
        let configuration = configuration(base: root)
        if FileManager.default.fileExists(atPath: marker), let cache = try? TokenStore.open(configuration),
            (try? cache.info().recordCounts) == expectedCounts(accounts: accounts)
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

    // MARK: token responses

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func secretText(seed: UInt64, length: Int) -> String {
        Corpus.secret(seed: seed, length: length).reveal()
    }

    /// A refresh-grant response (JSON bytes) for AT slot `slot` of a stored account, with the context an auth client
    /// would pass: same scopes as the stored token (which it replaces), client_info, a real-shaped id_token, `foci`
    /// for the family clients.
    static func tokenResponse(number: Int, accounts: Int) -> (json: [UInt8], context: TokenRequestContext) {
        let index = Int(Corpus.mix(UInt64(number) &+ 0x16E5) % UInt64(accounts))
        let slot = Int(Corpus.mix(UInt64(number) &+ 0x1607) % UInt64(accessTokensPerAccount))
        let info = account(index)
        let bucket = bucket(account: index, slot: slot)
        let client = clientIndex(bucket: bucket), realm = info.realms[realmIndex(bucket: bucket)]
        let now = cachedAt + 900
        let seed = UInt64(number) &* 8 &+ 0x5EED_0000
        let header = base64url(Array(#"{"typ":"JWT","alg":"RS256","kid":"nOo3ZDrODXEK1jKWhXslHR_KXEg"}"#.utf8))
        let claims = #"""
            {"aud":"\#(clientIDs[client])","iss":"https://login.microsoftonline.com/\#(realm)/v2.0","iat":\#(now),"nbf":\#(now),"exp":\#(now + 3_600),"name":"User \#(index)","oid":"\#(info.objectID)","preferred_username":"user\#(index)@contoso\#(index % tenantCount).example","rh":"0.AXkA\#(secretText(seed: seed, length: 40).suffix(20))","sub":"\#(secretText(seed: seed &+ 1, length: 80).suffix(43))","tid":"\#(realm)","uti":"\#(secretText(seed: seed &+ 2, length: 60).suffix(22))","ver":"2.0"}
            """#
        let signature = String(secretText(seed: seed &+ 3, length: 400).suffix(342))
        let idToken = header + "." + base64url(Array(claims.utf8)) + "." + signature
        let scope = scopes(account: index, slot: slot).joined(separator: " ")
        let foci = client < familyClientCount ? #","foci":"1""# : ""
        let json = #"""
            {"token_type":"Bearer","scope":"\#(scope)","expires_in":3599,"ext_expires_in":3599,"refresh_in":1799,"access_token":"\#(secretText(seed: seed &+ 4, length: 1_040))","refresh_token":"\#(secretText(seed: seed &+ 5, length: 1_050))","id_token":"\#(idToken)","client_info":"\#(clientInfo(info))"\#(foci)}
            """#
        let context = TokenRequestContext(
            clientID: clientIDs[client], authority: try! Authority("https://login.microsoftonline.com/\(realm)"),
            requestedScopes: [scope], grantType: "refresh_token", now: now
        )
        return (Array(json.utf8), context)
    }
}
