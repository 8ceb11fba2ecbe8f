import TestSupport
import Testing

@testable import TokenCache

/// The store's lookup against the rules written out directly, over generated buckets of one to four tokens, read
/// both ways a store can be: as written (a lone token found under its bucket prefix and decided by its body alone)
/// and as a version-1 store (a one-token bucket walked to its end, a two-token bucket from the views of its one pass,
/// larger ones by walking the bucket again). Every path must give what the rules give.
@Suite struct SilentLookupModelTests {
    static let environments = ["login.microsoftonline.com", "LOGIN.windows.net", "login.microsoftonline.us"]
    static let scopes = ["Files.Read", "mail.read", "User.Read", "api://x/.default"]

    /// What the lookup rules (Docs/Semantics.md, "Access-token lookup and candidate order") pick among `tokens`
    /// (all of one bucket), by the pure query types.
    static func expected(_ tokens: [AccessToken], query: SilentLookupQuery) throws -> AccessToken? {
        let requested = try ScopeSet.request(query.scopes)
        return try tokens.filter { token in
            let target = try ScopeSet(parsing: token.target)
            return EnvironmentAliases.builtIn.areAliases(token.environment, query.environment)
                && target.isSuperset(of: requested)
                && AccessTokenExpiry.usability(
                    expiresOn: token.expiresOn, cachedAt: token.cachedAt, refreshOn: token.refreshOn, now: query.now
                ).isUsable
        }.max { $0.cachedAt < $1.cachedAt }  // cached_at values are distinct, so no tie-break is needed
    }

    /// How the store under test is read.
    enum Reading: CaseIterable {
        /// As written: a bucket's lone token under the bucket prefix (FORMAT.md §4.3).
        case asWritten
        /// As a version-1 store opened read-only: every token under its entry key, every bucket walked to its end.
        case version1ReadOnly
    }

    @Test(arguments: Reading.allCases)
    func agreesWithTheRulesOnGeneratedBuckets(reading: Reading) throws {
        try TestStore.with(cipher: reading == .version1ReadOnly ? .xchacha20Poly1305 : nil) { store, cache in
            var generator = SplitMix64(seed: 0x10C0_0C0B)
            var cases: [(tokens: [AccessToken], queries: [SilentLookupQuery])] = []
            for round in 0..<120 {
                let home = "uid-\(round).utid"
                let count = 1 + round % 4
                // Distinct (environment, scope set) pairs, so no token replaces another; distinct cached_at values.
                var pairs = Set<String>()
                var tokens: [AccessToken] = []
                var ages = Array(0..<50).shuffled(using: &generator)
                while tokens.count < count {
                    let environment = Self.environments.randomElement(using: &generator)!
                    let target = Self.scopes.filter { _ in Bool.random(using: &generator) }
                    guard !target.isEmpty, pairs.insert(environment.lowercased() + "|" + target.joined(separator: " ").lowercased()).inserted
                    else { continue }
                    var token = Samples.accessToken(
                        home: home, target: target.joined(separator: " "), secret: "secret-\(round)-\(tokens.count)", environment: environment)
                    token.cachedAt = Samples.now - Int64(ages.removeLast()) * 97 + (Int.random(in: 0..<10, using: &generator) == 0 ? 500 : 0)
                    token.expiresOn = token.cachedAt + Int64.random(in: 0...3_000, using: &generator)
                    token.refreshOn = nil
                    tokens.append(token)
                }
                // A token of another client in the same account: never the answer.
                var other = Samples.accessToken(home: home, client: "other-client", target: Self.scopes.joined(separator: " "))
                other.cachedAt = Samples.now + 100_000
                try cache.write { writer in
                    for token in tokens { try writer.put(token) }
                    try writer.put(other)
                }
                var queries: [SilentLookupQuery] = []
                for _ in 0..<4 {
                    let scopes = Self.scopes.filter { _ in Bool.random(using: &generator) }
                    guard !scopes.isEmpty else { continue }
                    queries.append(
                        SilentLookupQuery(
                            clientID: Samples.client, homeAccountID: home, environment: "login.microsoftonline.com", realm: "utid1",
                            scopes: scopes.map { $0.uppercased() }, now: Samples.now))
                }
                cases.append((tokens, queries))
            }
            var reader = cache
            if reading == .version1ReadOnly {
                try AccessTokenPlacementTests.downgradeToVersion1(store, cache)
                reader = try store.openReadOnly()
                #expect(try reader.info().readVersion == 1)
            }
            var hits = 0
            for (round, (tokens, queries)) in cases.enumerated() {
                for query in queries {
                    let want = try Self.expected(tokens, query: query)
                    let result = try reader.silentLookup(query)
                    #expect(result.accessToken?.entity.secret.reveal() == want?.secret.reveal(), "round \(round), scopes \(query.scopes)")
                    #expect((result.outcome == .hit) == (want != nil))
                    #expect(try result.corrupt.isEmpty)
                    if want != nil { hits += 1 }
                }
            }
            #expect(hits > 50)  // the generator must exercise hits, not only misses
        }
    }
}
