import Foundation
import TestSupport

@testable import TokenCache

/// What the silent-flow suites ask of TestSupport's responses and user, as the library's types.
extension Responses {
    /// Another app of the Microsoft family (FOCI) than ``User/client``.
    static let familyMember = "d3590ed6-52b3-4102-aeff-aad2292ab01c"

    static func context(
        client: String = User.client, authority: String = "https://login.microsoftonline.com/common", scopes: [String] = ["User.Read"],
        grantType: String = "authorization_code", now: Int64 = ReferenceTime.now
    ) throws -> TokenRequestContext {
        TokenRequestContext(clientID: client, authority: try Authority(authority), requestedScopes: scopes, grantType: grantType, now: now)
    }

    static func query(
        client: String = User.client, home: String = User.home, environment: String = User.cloud, realm: String = User.utid,
        scopes: [String] = ["User.Read"], now: Int64 = ReferenceTime.now
    ) -> SilentLookupQuery {
        SilentLookupQuery(clientID: client, homeAccountID: home, environment: environment, realm: realm, scopes: scopes, now: now)
    }
}
