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
        guard !lhs.withoutReservedScopes.isEmpty, !rhs.withoutReservedScopes.isEmpty else { return }
        #expect(IntersectDelete.evicts(newTarget: lhs, storedTarget: rhs) == IntersectDelete.evicts(newTarget: rhs, storedTarget: lhs))
        #expect(IntersectDelete.evicts(newTarget: lhs, storedTarget: rhs) == lhs.withoutReservedScopes.intersects(rhs.withoutReservedScopes))
    }

    /// The point of the rule: after writes that apply it, no silent request matches two tokens of one bucket.
    @Test(arguments: targets, targets)
    func twoTokensThatOneRequestMatchesEvictEachOther(a: String, b: String) throws {
        let lhs = try ScopeSet(parsing: a), rhs = try ScopeSet(parsing: b)
        for request in ["user.read", "mail.read", "files.read openid", "email", "https://graph.microsoft.com/.default"] {
            let scopes = try ScopeSet.request([request])
            guard lhs.isSuperset(of: scopes), rhs.isSuperset(of: scopes) else { continue }
            #expect(IntersectDelete.evicts(newTarget: lhs, storedTarget: rhs), "\(request): \(a) / \(b)")
            #expect(IntersectDelete.evicts(newTarget: rhs, storedTarget: lhs), "\(request): \(b) / \(a)")
        }
    }
}
