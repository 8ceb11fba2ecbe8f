import Testing

@testable import TokenCache

@Suite struct RealmResolutionTests {
    static let msaHome = "00000000-0000-0000-40c0-3bac188d0d10.9188040d-6c67-4c5b-b112-36a304b66dad"
    static let adfsHome = "unZYjm1NugFLhP1l338bxhRYyHbtCYOWX1P+F2fCsiQ="

    @Test(arguments: ["common", "COMMON", "Organizations", "organizations", "consumers", "CoNsUmErS"])
    func tenantlessRealms(realm: String) {
        #expect(RealmResolution.isTenantless(realm))
    }

    @Test(arguments: [
        "", "common ", " common", "commons", "organisations", "consumer", "adfs", "contoso", "contoso.onmicrosoft.com",
        "72f988bf-86f1-41af-91ab-2d7cd011db47", "\u{FF23}OMMON",  // fullwidth C
        "organ\u{130}zations",  // dotted capital I is not ASCII
    ])
    func otherRealmsAreNotTenantless(realm: String) {
        #expect(!RealmResolution.isTenantless(realm))
    }

    @Test(arguments: [
        ("common", "uid.utid", ["common", "utid"]),
        ("ORGANIZATIONS", "uid.72f988bf-86f1-41af-91ab-2d7cd011db47", ["ORGANIZATIONS", "72f988bf-86f1-41af-91ab-2d7cd011db47"]),
        ("consumers", msaHome, ["consumers", "9188040d-6c67-4c5b-b112-36a304b66dad"]),
        ("Common", "uid.UTID", ["Common", "UTID"]),  // returned as given; the caller compares case-insensitively
        ("common", "uid-b2c_1_signin.utid", ["common", "utid"]),
        ("common", "a.b.c", ["common", "c"]),  // the utid is after the LAST dot
        ("utid", "uid.utid", ["utid"]),  // a tenant id is tried exactly, nothing added
        ("contoso", "uid.utid", ["contoso"]),
        ("UTID", "uid.other", ["UTID"]),
        ("common", "nodots", ["common"]),
        ("common", adfsHome, ["common"]),  // ADFS: base64 sub, no home tenant
        ("organizations", "abc+/de=", ["organizations"]),
        ("common", "uid.", ["common"]),  // empty utid
        ("common", "", ["common"]),
        ("common", "uid.COMMON", ["common"]),  // never the same realm twice
        ("", "uid.utid", [""]),
    ])
    func candidatesTryTheQueryRealmThenTheHomeTenantForTenantlessQueries(query: String, home: String, expected: [String]) {
        #expect(RealmResolution.candidates(queryRealm: query, homeAccountID: home) == expected)
    }

    @Test(arguments: [
        ("uid.utid", String?.some("utid")),
        ("a.b.c", "c"),
        (".utid", "utid"),
        ("uid.", nil),
        ("nodot", nil),
        ("", nil),
        (".", nil),
        (adfsHome, nil),
        ("abc+/=.x", "x"),
        (msaHome, "9188040d-6c67-4c5b-b112-36a304b66dad"),
        ("uid.T\u{E9}nant", "T\u{E9}nant"),
    ] as [(String, String?)])
    func homeTenantIsTheTextAfterTheLastDot(id: String, tenant: String?) {
        #expect(RealmResolution.homeTenant(ofHomeAccountID: id) == tenant)
    }
}
