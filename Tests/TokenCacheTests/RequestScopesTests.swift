import Testing

@testable import TokenCache

@Suite struct RequestScopesTests {
    @Test func reservedScopesAreTheDotNetList() {
        #expect(ReservedScopes.all == ["openid", "profile", "offline_access"])
        // The lookup's byte comparison agrees with the public set.
        #expect(ReservedScopes.all.allSatisfy(ReservedScopes.contains))
        #expect(!["openid2", "Profile", "offline-access", "email", ""].contains(where: ReservedScopes.contains))
    }

    @Test(arguments: [
        (["User.Read openid profile offline_access"], "user.read"),
        (["  OPENID\tMail.Read  mail.read \n"], "mail.read"),
        (["a", "A", " a "], "a"),
        (["Profile", "Files.Read", "OFFLINE_ACCESS user.read"], "files.read user.read"),
        (["https://graph.microsoft.com/.default", "offline_access"], "https://graph.microsoft.com/.default"),
        (["email openid"], "email"),  // email is not reserved (the .NET rule, not the JS one)
        (["openid2 offline-access profile.read"], "offline-access openid2 profile.read"),  // near misses stay
    ])
    func requestRemovesReservedScopesAndNormalizes(input: [String], canonical: String) throws {
        let request = try ScopeSet.request(input)
        #expect(request.canonical == canonical)
        #expect(!request.isEmpty)
        #expect(request.normalized.allSatisfy { !ReservedScopes.all.contains($0) })
    }

    @Test(arguments: [
        ["openid"],
        ["openid profile offline_access"],
        ["OpenID", "PROFILE", "Offline_Access"],
        ["offline_access offline_access"],
        [],
        [""],
        ["  \t\n "],
    ])
    func requestWithNothingBesidesReservedScopesThrows(input: [String]) {
        let error = #expect(throws: TokenCacheError.self) { try ScopeSet.request(input) }
        #expect(error?.code == .invalidArgument)
    }

    @Test(arguments: [["user.read caf\u{E9}"], ["openid a\"b"], ["a\\b"]])
    func requestWithAMalformedScopeThrows(input: [String]) {
        let error = #expect(throws: TokenCacheError.self) { try ScopeSet.request(input) }
        #expect(error?.code == .invalidArgument)
    }

    @Test func withoutReservedScopesKeepsEverythingElse() throws {
        #expect(try ScopeSet(parsing: "openid User.Read PROFILE offline_access email").withoutReservedScopes.canonical == "email user.read")
        #expect(try ScopeSet(parsing: "openid profile OFFLINE_ACCESS").withoutReservedScopes.isEmpty)
        #expect(try ScopeSet(parsing: "").withoutReservedScopes.isEmpty)
        let plain = try ScopeSet(parsing: "b a")
        #expect(plain.withoutReservedScopes == plain)
    }

    @Test func requestIsASubsetTestAgainstTargetsThatOmitReservedScopes() throws {
        let target = try ScopeSet(parsing: "User.Read Mail.Read")
        #expect(target.isSuperset(of: try ScopeSet.request(["openid user.read offline_access"])))
        #expect(!target.isSuperset(of: try ScopeSet.request(["openid files.read"])))
    }
}
