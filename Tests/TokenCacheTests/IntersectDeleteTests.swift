import Testing

@testable import TokenCache

@Suite struct IntersectDeleteTests {
    @Test(arguments: [
        ("user.read", "user.read mail.read", true),
        ("User.Read openid", "USER.READ", true),
        ("https://graph.microsoft.com/.default", "https://graph.microsoft.com/.DEFAULT openid", true),
        ("user.read email", "files.read email", true),  // email is not reserved
        ("user.read openid profile offline_access", "files.read openid profile offline_access", false),
        ("user.read", "files.read", false),
        ("user.read", "user.readwrite", false),
        ("user.read", "", false),
        ("", "user.read", false),
        ("", "", false),
        // A new token with only reserved scopes compares full sets (the msal-js fallback)...
        ("openid profile", "openid", true),
        ("OPENID profile", "user.read openid", true),
        ("offline_access", "openid profile", false),
        // ...and the fallback looks at the new token only.
        ("user.read openid", "openid profile", false),
    ])
    func evictsWhenRealScopesIntersect(new: String, stored: String, evicts: Bool) throws {
        let result = IntersectDelete.evicts(newTarget: try ScopeSet(parsing: new), storedTarget: try ScopeSet(parsing: stored))
        #expect(result == evicts)
    }

    static let targets = [
        "user.read", "User.Read Mail.Read", "mail.read openid", "files.read profile offline_access", "openid profile",
        "email", "https://graph.microsoft.com/.default", "USER.READ files.read openid",
    ]

    @Test(arguments: targets, targets)
    func symmetricUnlessANewTokenHasOnlyReservedScopes(a: String, b: String) throws {
        let lhs = try ScopeSet(parsing: a), rhs = try ScopeSet(parsing: b)
        if !lhs.withoutReservedScopes.isEmpty, !rhs.withoutReservedScopes.isEmpty {
            #expect(IntersectDelete.evicts(newTarget: lhs, storedTarget: rhs) == IntersectDelete.evicts(newTarget: rhs, storedTarget: lhs))
            #expect(IntersectDelete.evicts(newTarget: lhs, storedTarget: rhs) == lhs.withoutReservedScopes.intersects(rhs.withoutReservedScopes))
        } else {
            // The exception: a new token with only reserved scopes compares full sets; the other direction does not.
            for (new, stored) in [(lhs, rhs), (rhs, lhs)] {
                let expected = new.withoutReservedScopes.isEmpty
                    ? new.intersects(stored) : new.withoutReservedScopes.intersects(stored.withoutReservedScopes)
                #expect(IntersectDelete.evicts(newTarget: new, storedTarget: stored) == expected, "new \(new) / stored \(stored)")
            }
        }
    }

    static let requests = ["user.read", "mail.read", "files.read openid", "email", "https://graph.microsoft.com/.default"]

    /// Every (target, target, request) where the request matches both targets: only these cases say anything.
    static let pairsOneRequestMatches: [(String, String, String)] = targets.flatMap { a in
        targets.flatMap { b in
            requests.filter { request in
                let scopes = try! ScopeSet.request([request])
                return try! ScopeSet(parsing: a).isSuperset(of: scopes) && ScopeSet(parsing: b).isSuperset(of: scopes)
            }.map { (a, b, $0) }
        }
    }

    /// The table above is neither empty nor only the diagonal: it holds the 19 cases worked out by hand
    /// (17 pairs of targets).
    @Test func pairsOneRequestMatchesAreThe19WorkedOutByHand() {
        #expect(Self.pairsOneRequestMatches.count == 19)
        #expect(Set(Self.pairsOneRequestMatches.map { "\($0.0) / \($0.1)" }).count == 17)
        #expect(Self.pairsOneRequestMatches.contains { $0 == ("User.Read Mail.Read", "mail.read openid", "mail.read") })
        #expect(Self.pairsOneRequestMatches.contains { $0 == ("user.read", "USER.READ files.read openid", "user.read") })
        // The request drops openid, so `files.read openid` matches a token without openid.
        #expect(Self.pairsOneRequestMatches.contains { $0 == ("files.read profile offline_access", "USER.READ files.read openid", "files.read openid") })
        #expect(!Self.pairsOneRequestMatches.contains { $0.0 == "openid profile" || $0.1 == "openid profile" })
    }

    /// The point of the rule: after writes that apply it, no silent request matches two tokens of one bucket.
    @Test(arguments: pairsOneRequestMatches)
    func twoTokensThatOneRequestMatchesEvictEachOther(a: String, b: String, request: String) throws {
        let lhs = try ScopeSet(parsing: a), rhs = try ScopeSet(parsing: b)
        let scopes = try ScopeSet.request([request])
        try #require(lhs.isSuperset(of: scopes) && rhs.isSuperset(of: scopes))
        #expect(IntersectDelete.evicts(newTarget: lhs, storedTarget: rhs), "\(request): \(a) / \(b)")
        #expect(IntersectDelete.evicts(newTarget: rhs, storedTarget: lhs), "\(request): \(b) / \(a)")
    }

    /// Expired tokens go whatever their cloud; live ones only within the new token's alias group and by scopes.
    @Test(arguments: [
        // (stored environment, stored target, expires in, superseded)
        ("login.windows.net", "user.read", 3600, true),  // an alias of the new token's host, overlapping scopes
        ("login.windows.net", "files.read", 3600, false),  // same group, disjoint scopes
        ("login.chinacloudapi.cn", "user.read", 3600, false),  // overlapping scopes, another cloud
        ("login.chinacloudapi.cn", "files.read", -1, true),  // expired: goes wherever it lives
        ("login.microsoftonline.com", "files.read", 0, false),  // expires exactly now: still live
    ] as [(String, String, Int64, Bool)])
    func supersededTokensAreThoseOfTheGroupWhoseScopesIntersectOrAnyExpiredOne(
        environment: String, target: String, expiresIn: Int64, superseded: Bool
    ) throws {
        let now: Int64 = 1_800_000_000
        let verdict = IntersectDelete.supersedes(
            new: try ScopeSet(parsing: "User.Read openid"), environment: "login.microsoftonline.com",
            stored: try ScopeSet(parsing: target), environment: environment, expiresOn: now + expiresIn, now: now, aliases: .builtIn
        )
        #expect(verdict == superseded)
    }
}
