import Testing
import TokenCacheSodium

@testable import TokenCache
import TokenCacheRecords

/// The allocation-free checks of the lookup path agree with the reference rules they replace.
@Suite struct LookupMatchingTests {
    private static let hosts = [
        "login.microsoftonline.com", "LOGIN.WINDOWS.NET", "login.microsoft.com", "sts.windows.net", "login.chinacloudapi.cn",
        "login.partner.microsoftonline.cn", "login.microsoftonline.us", "login.usgovcloudapi.net", "login-us.microsoftonline.com",
        "login.microsoftonline.de", "sts.contoso.example", "STS.Contoso.Example", "login.microsoftonline.co", "", "k\u{212A}.example",
        "kk.example",
    ]

    @Test func anAliasGroupContainsExactlyTheHostsThatAreAliases() {
        for aliases in [EnvironmentAliases.builtIn, EnvironmentAliases.builtIn.adding(["sts.contoso.example", "login.windows.net"])] {
            for query in Self.hosts {
                let group = aliases.group(of: query)
                for stored in Self.hosts {
                    #expect(group.contains(stored) == aliases.areAliases(stored, query), "\(stored) ~ \(query)")
                }
            }
        }
    }

    @Test func coveredByTargetAgreesWithTheParsedSet() throws {
        let targets = [
            "User.Read", "user.read Mail.Read", "  Mail.Read\tUSER.READ  ", "openid profile", "https://graph.microsoft.com/.default",
            "User.ReadWrite", "User.Read.All User.Read", "a b c d",
        ]
        let requests: [[String]] = [["User.Read"], ["MAIL.READ", "user.read"], ["User.Rea"], ["c", "a"], ["a", "e"], ["User.Read.All"]]
        for target in targets {
            let parsed = try ScopeSet(parsing: target)
            for request in requests {
                let requested = try ScopeSet(request)
                #expect(requested.isCovered(byTarget: target) == parsed.isSuperset(of: requested), "\(request) in \(target)")
            }
        }
    }

    @Test func scopeSetsAreSortedAndDeduplicatedBytewise() throws {
        #expect(try ScopeSet(["b", "A", "a", " a  B ", "c"]).normalized == ["a", "b", "c"])
        #expect(try ScopeSet(parsing: "Z.Read z.read y").canonical == "y z.read")
    }

    /// A summary is read in place, in either schema (2: what this version writes; 1: a bare field map, what stores of
    /// format version 3 and older hold); missing or mistyped fields are errors naming the field.
    @Test(arguments: [FieldType.compactSchema, FieldType.namedSchema])
    func summariesAreParsedInPlaceWithTheirErrors(schema: UInt8) throws {
        func parse(_ map: FieldMap) throws(FormatError) -> AccessTokenSummary {
            let plaintext: SecureBuffer
            if schema == FieldType.compactSchema {
                plaintext = map.encodedSummary()
                #expect(plaintext.withUnsafeBytes { $0.first } == 0x02)
            } else {
                plaintext = SecureBuffer(count: map.encodedCount)
                plaintext.withUnsafeMutableBytes { bytes in
                    var writer = ByteWriter(bytes)
                    map.encode(into: &writer)
                }
            }
            return try plaintext.withUnsafeBytes { bytes in
                Result { () throws(FormatError) in AccessTokenSummary(try AccessTokenSummaryView(plaintext: bytes)) }
            }.get()
        }
        var map = FieldMap()
        map["cached_at"] = .integer(10)
        map["environment"] = .string("login.microsoftonline.com")
        map["expires_on"] = .integer(3_610)
        map["target"] = .string("mail.read user.read")
        map["x_future"] = .json(Array("[1]".utf8))
        let summary = try parse(map)
        #expect(summary.environment == "login.microsoftonline.com" && summary.canonicalTarget == "mail.read user.read")
        #expect(summary.cachedAt == 10 && summary.expiresOn == 3_610 && summary.refreshOn == nil)

        var missing = map
        missing["target"] = nil
        #expect(throws: FormatError("AccessToken record lacks required field 'target'")) { try parse(missing) }
        var mistyped = map
        mistyped["expires_on"] = .string("soon")
        #expect(throws: FormatError("AccessToken field 'expires_on' is not an integer")) { try parse(mistyped) }
    }
}
