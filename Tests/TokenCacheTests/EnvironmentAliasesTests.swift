import Testing

@testable import TokenCache

@Suite struct EnvironmentAliasesTests {
    /// The built-in table (Docs/Semantics.md, "Environments and alias groups"), canonical (preferred-cache) host
    /// first. Pinned here independently of the source, so that a change to the table is a deliberate one.
    static let expectedGroups: [[String]] = [
        ["login.windows.net", "login.microsoftonline.com", "login.microsoft.com", "sts.windows.net"],
        ["login.partner.microsoftonline.cn", "login.chinacloudapi.cn"],
        ["login.microsoftonline.us", "login.usgovcloudapi.net"],
        ["login-us.microsoftonline.com"],
        ["login.microsoftonline.de"],
        ["login.windows-ppe.net", "sts.windows-ppe.net", "login.microsoft-ppe.com"],
        ["login.sovcloud-identity.fr"],
        ["login.sovcloud-identity.de"],
        ["login.sovcloud-identity.sg"],
    ]

    static let allBuiltInHosts = expectedGroups.flatMap { $0 }

    static func expectedGroupIndex(of host: String) -> Int? {
        expectedGroups.firstIndex { $0.contains(host) }
    }

    /// Mixed-case spellings, to check that case never matters.
    static func shouted(_ host: String) -> String {
        String(host.enumerated().map { $0.offset.isMultiple(of: 2) ? Character($0.element.uppercased()) : $0.element })
    }

    @Test(arguments: expectedGroups)
    func builtInGroupHasItsPreferredCacheHostAsIDAndListsEveryAlias(group: [String]) {
        let aliases = EnvironmentAliases.builtIn
        for host in group {
            #expect(aliases.groupID(of: host) == group[0])
            #expect(aliases.hosts(aliasing: host) == group)
            for other in group {
                #expect(aliases.areAliases(host, other), "\(host) ~ \(other)")
            }
        }
    }

    @Test(arguments: allBuiltInHosts, allBuiltInHosts)
    func twoBuiltInHostsAreAliasesExactlyWhenTheyShareACloud(a: String, b: String) throws {
        let groupOfA = try #require(Self.expectedGroupIndex(of: a))
        let groupOfB = try #require(Self.expectedGroupIndex(of: b))
        let sameCloud = groupOfA == groupOfB
        let aliases = EnvironmentAliases.builtIn
        #expect(aliases.areAliases(a, b) == sameCloud)
        #expect(aliases.areAliases(Self.shouted(a), b.uppercased()) == sameCloud)
        #expect((aliases.groupID(of: a) == aliases.groupID(of: b)) == sameCloud)
    }

    @Test func builtInHasNineCloudsAndEachHostOnce() {
        #expect(Self.expectedGroups.count == 9)
        #expect(Set(Self.allBuiltInHosts).count == Self.allBuiltInHosts.count)
        #expect(Set(Self.allBuiltInHosts.map { EnvironmentAliases.builtIn.groupID(of: $0) }).count == 9)
        #expect(EnvironmentAliases.builtIn == EnvironmentAliases(groups: Self.expectedGroups))
    }

    @Test(arguments: [
        "fs.msidlab8.com",  // ADFS
        "contoso.b2clogin.com",
        "login.microsoftonline.com.evil.example",
        "evil-login.windows.net",
        "westus2.login.microsoft.com",  // regional sub-hosts are not folded into their cloud
        "login.windows.net.",  // no trailing-dot normalization
        "login.windows.net:443",
        "",
    ])
    func unknownHostFormsItsOwnLowerCasedGroup(host: String) {
        let aliases = EnvironmentAliases.builtIn
        let lower = host.lowercased()
        #expect(aliases.groupID(of: host) == lower)
        #expect(aliases.groupID(of: Self.shouted(host)) == lower)
        #expect(aliases.hosts(aliasing: Self.shouted(host)) == [lower])
        #expect(aliases.areAliases(host, host.uppercased()))
        for known in Self.allBuiltInHosts {
            #expect(!aliases.areAliases(host, known), "\(host) ~ \(known)")
        }
        #expect(!aliases.areAliases(host, "other.example"))
    }

    @Test func caseFoldingIsASCIIOnlyAndComparisonIsByBytes() {
        let aliases = EnvironmentAliases.builtIn
        #expect(aliases.areAliases("LOGIN.MicrosoftOnline.COM", "sts.WINDOWS.net"))
        #expect(aliases.groupID(of: "LOGIN.MICROSOFTONLINE.COM") == "login.windows.net")
        // U+0130 (İ) and U+212A (Kelvin sign) lower-case to ASCII letters under Unicode rules, not under ASCII ones.
        #expect(!aliases.areAliases("LOG\u{130}N.windows.net", "login.windows.net"))
        #expect(aliases.groupID(of: "LOG\u{130}N.windows.net") == "log\u{130}n.windows.net")
        #expect(!aliases.areAliases("\u{212A}.example", "k.example"))
        // Canonically equivalent but byte-different: equal as Strings, different hosts.
        #expect("caf\u{E9}.example" == "cafe\u{301}.example")
        #expect(!aliases.areAliases("caf\u{E9}.example", "cafe\u{301}.example"))
        let custom = EnvironmentAliases(groups: [["caf\u{E9}.example", "x.example"]])
        #expect(custom.areAliases("x.example", "CAF\u{E9}.example"))
        #expect(!custom.areAliases("x.example", "cafe\u{301}.example"))
    }

    @Test func addingMovesAHostOutOfItsBuiltInGroup() {
        let aliases = EnvironmentAliases.builtIn.adding(["login.contoso.example", "STS.windows.net"])
        #expect(aliases.areAliases("sts.windows.net", "Login.Contoso.Example"))
        #expect(!aliases.areAliases("sts.windows.net", "login.windows.net"))
        #expect(aliases.groupID(of: "sts.windows.net") == "login.contoso.example")
        #expect(aliases.hosts(aliasing: "sts.windows.net") == ["login.contoso.example", "sts.windows.net"])
        #expect(aliases.hosts(aliasing: "login.microsoft.com") == ["login.windows.net", "login.microsoftonline.com", "login.microsoft.com"])
        #expect(aliases.groupID(of: "login.microsoftonline.com") == "login.windows.net")
        // A value type: the built-in table is untouched.
        #expect(EnvironmentAliases.builtIn.areAliases("sts.windows.net", "login.windows.net"))
        #expect(!EnvironmentAliases.builtIn.areAliases("sts.windows.net", "login.contoso.example"))
        #expect(aliases != EnvironmentAliases.builtIn)
    }

    @Test func addingUnknownHostsMakesThemAliases() {
        let aliases = EnvironmentAliases.builtIn.adding(["Login.Contoso.Example", "sts.contoso.example", "login.contoso.example"])
        #expect(aliases.areAliases("login.contoso.example", "STS.contoso.example"))
        #expect(aliases.groupID(of: "sts.contoso.example") == "login.contoso.example")
        #expect(aliases.hosts(aliasing: "sts.contoso.example") == ["login.contoso.example", "sts.contoso.example"])
        #expect(!aliases.areAliases("login.contoso.example", "login.windows.net"))
        #expect(!EnvironmentAliases.builtIn.areAliases("login.contoso.example", "sts.contoso.example"))
    }

    @Test func movingACanonicalHostReidentifiesTheRestOfItsGroup() {
        let aliases = EnvironmentAliases.builtIn.adding(["login.windows.net"])
        #expect(aliases.hosts(aliasing: "login.windows.net") == ["login.windows.net"])
        #expect(aliases.groupID(of: "sts.windows.net") == "login.microsoftonline.com")
        #expect(aliases.hosts(aliasing: "sts.windows.net") == ["login.microsoftonline.com", "login.microsoft.com", "sts.windows.net"])
        #expect(!aliases.areAliases("login.windows.net", "login.microsoftonline.com"))
        #expect(aliases.areAliases("login.microsoft.com", "sts.windows.net"))
    }

    @Test func emptyingAGroupRemovesIt() {
        let aliases = EnvironmentAliases.builtIn.adding(["login.usgovcloudapi.net", "login.microsoftonline.us"])
        #expect(aliases.groupID(of: "login.microsoftonline.us") == "login.usgovcloudapi.net")
        #expect(aliases.hosts(aliasing: "login.microsoftonline.us") == ["login.usgovcloudapi.net", "login.microsoftonline.us"])
        #expect(aliases == EnvironmentAliases(groups: [
            Self.expectedGroups[0], Self.expectedGroups[1], ["login.usgovcloudapi.net", "login.microsoftonline.us"],
        ] + Self.expectedGroups[3...]))
    }

    @Test func restatingAGroupWithAnExtraHostExtendsItAndKeepsItsID() {
        let builtIn = EnvironmentAliases.builtIn
        let aliases = builtIn.adding(builtIn.hosts(aliasing: "login.windows.net") + ["westus2.login.microsoft.com"])
        #expect(aliases.groupID(of: "WESTUS2.login.microsoft.com") == "login.windows.net")
        for host in Self.expectedGroups[0] {
            #expect(aliases.groupID(of: host) == "login.windows.net")
            #expect(aliases.areAliases(host, "westus2.login.microsoft.com"))
        }
        #expect(aliases.hosts(aliasing: "sts.windows.net") == Self.expectedGroups[0] + ["westus2.login.microsoft.com"])
    }

    @Test func initAppliesGroupsInOrderAndIgnoresEmptyGroupsAndRepeats() {
        let aliases = EnvironmentAliases(groups: [["a.example", "b.example", "c.example"], [], ["d.example", "B.EXAMPLE", "d.example", "b.example"]])
        #expect(aliases.hosts(aliasing: "b.example") == ["d.example", "b.example"])
        #expect(aliases.hosts(aliasing: "c.example") == ["a.example", "c.example"])
        #expect(!aliases.areAliases("a.example", "b.example"))
        #expect(aliases == EnvironmentAliases(groups: []).adding(["a.example", "b.example", "c.example"]).adding(["d.example", "b.example"]))
        #expect(EnvironmentAliases(groups: []).groupID(of: "Login.Windows.Net") == "login.windows.net")
        #expect(!EnvironmentAliases(groups: []).areAliases("login.windows.net", "login.microsoftonline.com"))
    }

    @Test func equalityIsByContentNotByConstructionOrder() {
        let forward = EnvironmentAliases(groups: Self.expectedGroups)
        let backward = EnvironmentAliases(groups: Self.expectedGroups.reversed())
        #expect(forward == backward)
        #expect(forward.hashValue == backward.hashValue)
        #expect(forward.adding([]) == forward)
        #expect(forward.adding(["x.example"]) != forward)
        #expect(Set([forward, backward, .builtIn]).count == 1)
    }

    @Test(arguments: allBuiltInHosts + ["fs.msidlab8.com", "Unknown.Example"])
    func groupIDIsStableAcrossCaseAliasesAndItself(host: String) {
        let aliases = EnvironmentAliases.builtIn
        let id = aliases.groupID(of: host)
        #expect(aliases.groupID(of: host.uppercased()) == id)
        #expect(aliases.groupID(of: Self.shouted(host)) == id)
        #expect(aliases.groupID(of: id) == id)
        #expect(aliases.hosts(aliasing: host).first == id)
        for alias in aliases.hosts(aliasing: host) {
            #expect(aliases.groupID(of: alias) == id)
        }
        #expect(EnvironmentAliases(groups: Self.expectedGroups.reversed()).groupID(of: host) == id)
    }
}
