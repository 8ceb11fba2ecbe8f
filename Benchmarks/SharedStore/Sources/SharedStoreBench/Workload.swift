import Foundation
import TokenCache
@_spi(Benchmarking) import TokenCacheBenchmarking

/// The questions and writes every phase draws from the synthetic population (`SyntheticPopulation`, the one
/// `cachetool bench` and the Benchmarks/ suite use), asked of both designs alike.
struct Workload: Sendable {
    let population: SyntheticPopulation

    init(accessTokens: Int) { population = SyntheticPopulation(accessTokens: accessTokens) }

    /// The time every lookup asks at: 1,000 s after the population's tokens were cached (2,599 s before they expire,
    /// before refresh_on), and after the tokens the ingests write were cached (900 s), so that a replaced token is
    /// a hit too.
    static let now = SyntheticPopulation.cachedAt + 1_000

    /// `count` hits drawn uniformly over the stored access tokens, one of each token's scopes asked for.
    func queries(count: Int, stream: UInt64) -> [SilentLookupQuery] {
        population.hitQueries(count: count, stream: stream).map { query in
            var query = query
            query.now = Self.now
            return query
        }
    }

    static func anchorRequest(_ query: SilentLookupQuery) -> AnchorRequest {
        AnchorRequest(
            partition: query.homeAccountID, clientID: query.clientID, environment: query.environment, realm: query.realm, scopes: query.scopes,
            now: query.now
        )
    }

    /// A refresh-grant response for a stored access token (replacing it and its account's refresh token, ID token,
    /// account and app metadata), and the same access token as the one-blob design writes it.
    struct Write: Sendable {
        var json: [UInt8]
        var context: TokenRequestContext
        var anchor: AnchorAccessToken
    }

    func write(number: Int) -> Write {
        let (json, context) = population.tokenResponse(number: number)
        return Write(json: json, context: context, anchor: Self.anchorToken(json: json, context: context, homeAccountID: population.tokenResponseHomeAccountID(number: number)))
    }

    static func anchorToken(json: [UInt8], context: TokenRequestContext, homeAccountID: String) -> AnchorAccessToken {
        let fields = (try? JSONSerialization.jsonObject(with: Data(json))) as? [String: Any] ?? [:]
        return AnchorAccessToken(
            homeAccountID: homeAccountID, environment: context.authority.host, clientID: context.clientID, realm: context.authority.tenant,
            target: fields["scope"] as? String ?? "", secret: fields["access_token"] as? String ?? "", cachedAt: context.now
        )
    }

    /// A response adding an access token of scope `scope` to account `index` (client 0, home tenant): its scope is
    /// no stored token's, so it replaces no access token, and every such write must be found afterwards.
    func addingWrite(account index: Int, scope: String, seed: UInt64) -> Write {
        let info = population.account(index)
        let clientID = SyntheticPopulation.clientIDs[0], realm = info.realms[0]
        let now = SyntheticPopulation.cachedAt + 900
        let claims = #"""
            {"aud":"\#(clientID)","iss":"https://login.microsoftonline.com/\#(realm)/v2.0","iat":\#(now),"nbf":\#(now),"exp":\#(now + 3_600),"name":"User \#(index)","oid":"\#(info.objectID)","preferred_username":"user\#(index)@contoso\#(index % SyntheticPopulation.tenantCount).example","sub":"\#(Self.text(seed &+ 1, 43))","tid":"\#(realm)","ver":"2.0"}
            """#
        let idToken = Self.base64url(#"{"typ":"JWT","alg":"RS256"}"#) + "." + Self.base64url(claims) + "." + Self.text(seed &+ 3, 342)
        let clientInfo = Self.base64url(#"{"uid":"\#(info.objectID)","utid":"\#(realm)"}"#)
        let accessToken = Self.text(seed &+ 4, 1_040)
        let json = #"""
            {"token_type":"Bearer","scope":"\#(scope)","expires_in":3599,"ext_expires_in":3599,"access_token":"\#(accessToken)","refresh_token":"\#(Self.text(seed &+ 5, 1_050))","id_token":"\#(idToken)","client_info":"\#(clientInfo)","foci":"1"}
            """#
        let context = TokenRequestContext(
            clientID: clientID, authority: try! Authority("https://login.microsoftonline.com/\(realm)"), requestedScopes: [scope],
            grantType: "authorization_code", now: now
        )
        let anchor = AnchorAccessToken(
            homeAccountID: info.homeAccountID, environment: SyntheticPopulation.environment, clientID: clientID, realm: realm, target: scope,
            secret: accessToken, cachedAt: now
        )
        return Write(json: Array(json.utf8), context: context, anchor: anchor)
    }

    static func text(_ seed: UInt64, _ length: Int) -> String { String(SyntheticPopulation.secret(seed: seed, length: length + 38).reveal().dropFirst(38)) }

    static func base64url(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The scope of the `i`-th token writer `host` adds in the lost-update experiment.
    static func lostScope(host: Int, number: Int) -> String { "\(lostScopePrefix)h\(host)-\(number)/write" }
    static let lostScopePrefix = "https://lost.example/"
}
