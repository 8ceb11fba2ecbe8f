import Testing

@testable import TokenCache

@Suite struct ScopeSetTests {
    @Test(arguments: [
        ("User.Read Mail.Read", "mail.read user.read"),
        ("  mail.read\tUSER.READ\n user.read ", "mail.read user.read"),
        ("b a b a", "a b"),
        ("", ""),
        ("https://graph.microsoft.com/.default", "https://graph.microsoft.com/.default"),
        ("B a", "a b"),
    ])
    func normalizesOrderCaseWhitespaceAndDuplicates(input: String, canonical: String) throws {
        #expect(try ScopeSet(parsing: input).canonical == canonical)
    }

    @Test func sortsBytewiseNotByLocale() throws {
        #expect(try ScopeSet(parsing: "a_b aa a").normalized == ["a", "a_b", "aa"])
    }

    @Test(arguments: ["Mail.Réad", "e\u{0301}", "\u{FF41}", "a\"b", "a\\b", "nul\u{0}x", "\u{7F}"])
    func rejectsBytesOutsideTheRFC6749Alphabet(input: String) {
        let error = #expect(throws: TokenCacheError.self) { try ScopeSet(parsing: input) }
        #expect(error?.code == .invalidArgument)
    }

    @Test func precomposedAndDecomposedFormsAreNeverEqualAsScopes() {
        // As Swift Strings these are equal; as scopes both are invalid, never silently merged.
        #expect("\u{E9}" == "e\u{0301}")
        #expect(errorCode { try ScopeSet(parsing: "\u{E9}") } == .invalidArgument)
    }

    @Test func supersetAndIntersection() throws {
        let stored = try ScopeSet(parsing: "User.Read Mail.Read openid profile")
        #expect(stored.isSuperset(of: try ScopeSet(parsing: "user.read")))
        #expect(stored.isSuperset(of: try ScopeSet(parsing: "PROFILE mail.read")))
        #expect(stored.isSuperset(of: try ScopeSet(parsing: "")))
        #expect(!stored.isSuperset(of: try ScopeSet(parsing: "user.read files.read")))
        #expect(stored.intersects(try ScopeSet(parsing: "files.read MAIL.READ")))
        #expect(!stored.intersects(try ScopeSet(parsing: "files.read")))
        #expect(stored.subtracting(["openid", "profile"]).canonical == "mail.read user.read")
    }

    @Test func fromSeveralStrings() throws {
        #expect(try ScopeSet(["a b", "c", "A"]).canonical == "a b c")
    }
}
