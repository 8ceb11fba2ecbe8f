import Testing

@testable import TokenCache

@Suite struct AuthorityTests {
    @Test(arguments: [
        ("https://login.microsoftonline.com/contoso.onmicrosoft.com/", "login.microsoftonline.com", "contoso.onmicrosoft.com", false, false),
        ("https://login.microsoftonline.com/common/v2.0", "login.microsoftonline.com", "common", true, false),
        ("https://login.microsoftonline.com/organizations", "login.microsoftonline.com", "organizations", true, false),
        ("https://login.microsoftonline.com/Consumers/", "login.microsoftonline.com", "Consumers", true, false),
        ("https://LOGIN.MicrosoftOnline.COM/Contoso.onmicrosoft.com", "login.microsoftonline.com", "Contoso.onmicrosoft.com", false, false),
        ("HTTPS://login.chinacloudapi.cn/c4f2a9e1-7b3d-4e8a-9c1f-2d6b8a4e7f10/oauth2/v2.0/token", "login.chinacloudapi.cn", "c4f2a9e1-7b3d-4e8a-9c1f-2d6b8a4e7f10", false, false),
        ("https://fs.contoso.com/adfs", "fs.contoso.com", "adfs", false, true),
        ("https://fs.contoso.com/ADFS/", "fs.contoso.com", "ADFS", false, true),
        ("https://sts.contoso.com:8443/adfs/oauth2/token", "sts.contoso.com", "adfs", false, true),
        ("https://contoso.b2clogin.com/contoso.onmicrosoft.com/B2C_1_signin", "contoso.b2clogin.com", "contoso.onmicrosoft.com", false, false),
        ("https://login.microsoftonline.com/commonx", "login.microsoftonline.com", "commonx", false, false),
    ])
    func parsesAuthorities(url: String, host: String, tenant: String, tenantless: Bool, adfs: Bool) throws {
        let authority = try Authority(url)
        #expect(authority.url == url)
        #expect(authority.host == host)
        #expect(authority.tenant == tenant)
        #expect(authority.isTenantless == tenantless)
        #expect(authority.isADFS == adfs)
    }

    @Test(arguments: [
        ("http://login.microsoftonline.com/common", "https"),
        ("ftp://login.microsoftonline.com/common", "https"),
        ("login.microsoftonline.com/common", "https"),
        ("https:/login.microsoftonline.com/common", "https"),
        ("https://", "https"),
        ("", "empty"),
        ("https://login.microsoftonline.com", "no tenant"),
        ("https://login.microsoftonline.com/", "no tenant"),
        ("https://login.microsoftonline.com//common", "no tenant"),
        ("https:///common", "no host"),
        ("https://:443/common", "no host"),
        ("https://login.microsoftonline.com/common?x=1", "query"),
        ("https://login.microsoftonline.com?tenant=common", "query"),
        ("https://login.microsoftonline.com/common#frag", "fragment"),
        ("https://user:pass@login.microsoftonline.com/common", "user info"),
        ("https://login.microsoftonline.com:0/common", "port"),
        ("https://login.microsoftonline.com:65536/common", "port"),
        ("https://login.microsoftonline.com:/common", "port"),
        ("https://login.microsoftonline.com:44x/common", "port"),
        ("https://login..microsoftonline.com/common", "host"),
        ("https://login.microsoftonline.com./common", "host"),
        ("https://[::1]/common", "host"),
        ("https://login.microsoftonline.com/com%6Don", "tenant segment"),
        ("https://login.microsoftonline.com/a+b", "tenant segment"),
        ("https://login.microsoftonline.com/ common", "whitespace"),
        ("https://lögin.example/common", "non-ASCII"),
        (" https://login.microsoftonline.com/common", "whitespace"),
    ])
    func rejectsBadAuthorities(url: String, phrase: String) {
        let error = ResponseFixtures.invalidArgument { _ = try Authority(url) }
        #expect(error?.message.hasPrefix("authority URL") == true)
        #expect(error?.message.contains(phrase) == true, "\(error?.message ?? "no error")")
    }

    @Test func equalURLsAreEqualAuthorities() throws {
        #expect(try Authority("https://login.microsoftonline.com/common") == Authority("https://login.microsoftonline.com/common"))
        #expect(try Authority("https://login.microsoftonline.com/common") != Authority("https://login.microsoftonline.com/organizations"))
    }
}
