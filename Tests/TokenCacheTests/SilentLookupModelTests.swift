import Testing

@testable import TokenCache

/// The store's lookup against the rules written out directly, over generated buckets of one to four tokens: the
/// lookup decides a one-token bucket by its body, a two-token bucket from the views of its one range pass, and
/// larger ones by walking the bucket again; all three must give what the rules give.
@Suite struct SilentLookupModelTests {
    static let environments = ["login.microsoftonline.com", "LOGIN.windows.net", "login.microsoftonline.us"]
    static let scopes = ["Files.Read", "mail.read", "User.Read", "api://x/.default"]

    /// What issue 3's rules pick among `tokens` (all of one bucket), by the pure query types.
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

    @Test func agreesWithTheRulesOnGeneratedBuckets() throws {
        try TestStore.with { _, cache in
            var generator = SplitMix64(seed: 0x10C0_0C0B)
            var hits = 0
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
                for _ in 0..<4 {
                    let scopes = Self.scopes.filter { _ in Bool.random(using: &generator) }
                    guard !scopes.isEmpty else { continue }
                    let query = SilentLookupQuery(
                        clientID: Samples.client, homeAccountID: home, environment: "login.microsoftonline.com", realm: "utid1",
                        scopes: scopes.map { $0.uppercased() }, now: Samples.now)
                    let want = try Self.expected(tokens, query: query)
                    let result = try cache.silentLookup(query)
                    #expect(result.accessToken?.entity.secret.reveal() == want?.secret.reveal(), "round \(round), scopes \(scopes)")
                    #expect((result.outcome == .hit) == (want != nil))
                    if want != nil { hits += 1 }
                }
            }
            #expect(hits > 50)  // the generator must exercise hits, not only misses
        }
    }
}
