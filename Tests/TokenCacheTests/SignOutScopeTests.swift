import Testing

@testable import TokenCache

/// The sign-out rule on its own, record by record: no store.
@Suite struct SignOutScopeTests {
    static let other = "another-client-0000"

    static func scope(client: String?, environment: String? = nil, family: String? = nil) -> SignOutScope {
        SignOutScope(clientID: client, environment: environment, familyID: family, aliases: .builtIn)
    }

    @Test func oneClientRemovesItsOwnTokensOnlyInAnyCaseOfItsID() {
        let scope = Self.scope(client: Samples.client.uppercased())
        #expect(scope.removes(Samples.accessToken()) && scope.removes(Samples.idToken()))
        #expect(scope.removes(Samples.refreshToken(family: nil)))
        #expect(!scope.removes(Samples.accessToken(client: Self.other)) && !scope.removes(Samples.idToken(client: Self.other)))
        #expect(!scope.removes(Samples.refreshToken(client: Self.other, family: nil)))
        #expect(scope.removes(Samples.account()))  // the profile goes with the sign-out
    }

    @Test(arguments: [("1", true), ("2", false), (nil, false)] as [(String?, Bool)])
    func aFamilyTokenGoesOnlyWithAClientKnownToBeInThatFamily(clientFamily: String?, removed: Bool) {
        let familyToken = Samples.refreshToken(client: Self.other, family: "1")
        #expect(Self.scope(client: Samples.client, family: clientFamily).removes(familyToken) == removed)
    }

    @Test func everyClientRemovesEveryTokenFamilyOnesIncluded() {
        let scope = Self.scope(client: nil)
        #expect(scope.removes(Samples.accessToken(client: Self.other)) && scope.removes(Samples.refreshToken(client: Self.other, family: "1")))
        #expect(scope.removes(Samples.refreshToken(client: Self.other, family: "7")))
    }

    @Test func anEnvironmentLimitsTheSignOutToItsAliasGroup() {
        let scope = Self.scope(client: nil, environment: "login.windows.net")  // an alias of login.microsoftonline.com
        #expect(scope.removes(Samples.accessToken()) && scope.removes(Samples.account()))
        let elsewhere = Samples.accessToken(environment: "login.chinacloudapi.cn")
        #expect(!scope.removes(elsewhere))
        var account = Samples.account()
        account.environment = "login.chinacloudapi.cn"
        #expect(!scope.removes(account))
        #expect(Self.scope(client: nil).removes(elsewhere))
    }
}
