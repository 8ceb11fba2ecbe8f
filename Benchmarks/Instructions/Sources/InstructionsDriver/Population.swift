import TokenCache

/// The synthetic population `cachetool bench` and the Benchmarks/ suite measure (the library's `SyntheticPopulation`,
/// `default` profile, seed 0), rebuilt here from the public API alone: that generator is SPI, and this driver must
/// compile against any tree whose public API it uses. The records, queries and token responses are the same as that
/// generator's, field for field (a pure function of the token number).
///
/// Per account (23 records): home account id `<oid>.<home tenant>`, two realms (home tenant, one guest of 1,009);
/// 10 access tokens over 8 buckets (4 clients × 2 realms; slots 0–7 one per bucket, slots 8 and 9 in two buckets
/// chosen per account), each 1–3 scopes of its own resource, secrets 1,000–1,080 bytes; one Account per realm; one
/// family refresh token (client 0) and an own one for clients 2 and 3; one ID token per (client, realm). Plus one
/// AppMetadata per client (clients 0 and 1 in family "1").
struct Population: Sendable {
    static let environment = "login.microsoftonline.com"
    /// The tokens' `cached_at`; ``queryNow`` is 10 minutes later: before refresh_on, an hour before expiry.
    static let cachedAt: Int64 = 1_790_000_000
    static let queryNow = cachedAt + 600
    static let clientIDs = (0..<4).map { guid(seed: 0x5EC1_0000 &+ UInt64($0)) }
    static let familyClientCount = 2
    static let tenantCount = 1_009
    static let permissions = ["read", "write", "admin"]

    /// The number of access tokens; accounts hold 10 each (the last one may hold fewer).
    let accessTokens: Int
    let accounts: Int

    init(accessTokens: Int) {
        precondition(accessTokens >= 1, "a population holds at least one access token")
        self.accessTokens = accessTokens
        accounts = (accessTokens + 9) / 10
    }

    func accessTokenCount(account: Int) -> Int { min(10, accessTokens - account * 10) }

    /// The record counts a store holding exactly this population has.
    var expectedCounts: [EntityKind: Int] {
        [.accessToken: accessTokens, .account: 2 * accounts, .refreshToken: 3 * accounts, .idToken: 8 * accounts, .appMetadata: 4]
    }

    var recordCount: Int { expectedCounts.values.reduce(0, +) }

    // MARK: Accounts and tokens

    struct AccountInfo {
        var objectID: String
        var homeAccountID: String
        /// Home tenant, then a guest tenant.
        var realms: [String]
    }

    private static let tenants = (0..<tenantCount).map { guid(seed: UInt64($0) &+ 0x7E7A_0000) }

    /// Account number `index`: any `Int` is an account, stored or not (those at or past ``accounts`` are not).
    func account(_ index: Int) -> AccountInfo {
        let objectID = Self.guid(seed: UInt64(index) &* 2 &+ 0xACC0_0000)
        let home = index % Self.tenantCount
        var guest = Int(Self.mix(UInt64(index) &+ 0x6E57) % UInt64(Self.tenantCount))
        if guest == home { guest = (guest + 1) % Self.tenantCount }
        return AccountInfo(objectID: objectID, homeAccountID: objectID + "." + Self.tenants[home], realms: [Self.tenants[home], Self.tenants[guest]])
    }

    /// Bucket 0–7 of an account's AT slot: client `bucket % 4`, realm `bucket / 4`.
    func bucket(account: Int, slot: Int) -> Int {
        switch slot {
        case 0..<8: slot
        case 8: account % 8
        default: (account / 8 + 3) % 8
        }
    }

    static func resource(_ slot: Int) -> String { "https://res\(slot).example" }

    /// The scopes of an AT slot: 1–3 of its own resource's.
    func scopes(account: Int, slot: Int) -> [String] {
        let count = 1 + (account &+ slot) % 3
        let first = (account / 3 &+ slot) % Self.permissions.count
        return (0..<count).map { Self.resource(slot) + "/" + Self.permissions[(first + $0) % Self.permissions.count] }
    }

    func accessToken(account: Int, slot: Int, info: AccountInfo) -> AccessToken {
        let bucket = bucket(account: account, slot: slot)
        let seed = UInt64(account) &* 64 &+ UInt64(slot)
        return AccessToken(
            homeAccountID: info.homeAccountID, environment: Self.environment, clientID: Self.clientIDs[bucket % 4],
            realm: info.realms[bucket / 4], target: scopes(account: account, slot: slot).joined(separator: " "),
            secret: Secret(bytes: Self.secretBytes(seed: seed, length: 1_000 + Int(Self.mix(seed &+ 0xA7) % 81))),
            cachedAt: Self.cachedAt, expiresOn: Self.cachedAt + 3_599, extendedExpiresOn: Self.cachedAt + 7_199,
            refreshOn: Self.cachedAt + 1_800
        )
    }

    static func clientInfo(_ info: AccountInfo) -> String {
        base64url(Array(#"{"uid":"\#(info.objectID)","utid":"\#(info.realms[0])"}"#.utf8))
    }

    /// The records of a run of whole accounts, in the order the library's generator writes them in one transaction:
    /// every access token of the run, then the accounts, the ID tokens and the refresh tokens.
    struct Batch {
        var accessTokens: [AccessToken] = []
        var accounts: [Account] = []
        var idTokens: [IDToken] = []
        var refreshTokens: [RefreshToken] = []
        var count: Int { accessTokens.count + accounts.count + idTokens.count + refreshTokens.count }

        func put(into writer: CacheWriter) throws {
            for record in accessTokens { try writer.put(record) }
            for record in accounts { try writer.put(record) }
            for record in idTokens { try writer.put(record) }
            for record in refreshTokens { try writer.put(record) }
        }
    }

    /// Everything accounts `indices` have in the store: their access tokens, 2 Accounts, 8 ID tokens, 3 refresh tokens each.
    func batch(_ indices: Range<Int>) -> Batch {
        var batch = Batch()
        for index in indices {
            let info = account(index)
            for slot in 0..<accessTokenCount(account: index) { batch.accessTokens.append(accessToken(account: index, slot: slot, info: info)) }
            let clientInfo = Self.clientInfo(info)
            let seed = UInt64(index) &* 64 &+ 32
            for (r, realm) in info.realms.enumerated() {
                batch.accounts.append(
                    Account(
                        homeAccountID: info.homeAccountID, environment: Self.environment, realm: realm, localAccountID: info.objectID,
                        username: "user\(index)@contoso\(index % Self.tenantCount).example", authorityType: "MSSTS",
                        accountSource: "authorization_code", name: "User \(index)", clientInfo: clientInfo
                    )
                )
                for client in 0..<Self.clientIDs.count {
                    let idSeed = seed &+ UInt64(r * 8 + client)
                    batch.idTokens.append(
                        IDToken(
                            homeAccountID: info.homeAccountID, environment: Self.environment, clientID: Self.clientIDs[client], realm: realm,
                            secret: Secret(bytes: Self.secretBytes(seed: idSeed, length: 1_100 + Int(Self.mix(idSeed) % 200)))
                        )
                    )
                }
            }
            for client in [0] + Array(Self.familyClientCount..<Self.clientIDs.count) {
                let rtSeed = seed &+ 20 &+ UInt64(client)
                batch.refreshTokens.append(
                    RefreshToken(
                        homeAccountID: info.homeAccountID, environment: Self.environment, clientID: Self.clientIDs[client],
                        secret: Secret(bytes: Self.secretBytes(seed: rtSeed, length: 1_000 + Int(Self.mix(rtSeed) % 100))),
                        familyID: client < Self.familyClientCount ? "1" : nil, target: "openid profile offline_access",
                        lastModificationTime: Self.cachedAt
                    )
                )
            }
        }
        return batch
    }

    static var appMetadata: [AppMetadata] {
        clientIDs.enumerated().map { client, id in
            AppMetadata(clientID: id, environment: environment, familyID: client < familyClientCount ? "1" : nil)
        }
    }

    // MARK: Queries

    /// Token number `i` of a uniform draw over all access tokens of the population, in stream `stream`.
    func drawToken(_ i: Int, stream: UInt64) -> (account: Int, slot: Int) {
        let number = Int(Self.mix(UInt64(i) &+ stream) % UInt64(accessTokens))
        return (number / 10, number % 10)
    }

    /// The number of access tokens in the bucket (client, realm) of `(account, slot)`: 1–3.
    func bucketSize(account: Int, slot: Int) -> Int {
        let bucket = bucket(account: account, slot: slot)
        return (0..<accessTokenCount(account: account)).count { self.bucket(account: account, slot: $0) == bucket }
    }

    /// A silent lookup that hits: a stored access token, asked for by one of its scopes, at ``queryNow``.
    func hitQuery(account: Int, slot: Int, number i: Int) -> SilentLookupQuery {
        let scopes = scopes(account: account, slot: slot)
        return query(account: account, slot: slot, scopes: [scopes[Int(Self.mix(UInt64(i) &+ 0x5C0) % UInt64(scopes.count))]])
    }

    /// `count` hit queries of stream `stream`: the `i`-th draw asks for token ``drawToken(_:stream:)`` of `i`; with
    /// `oneTokenBuckets`, draws whose token shares its bucket with another are skipped.
    func hitQueries(count: Int, stream: UInt64, oneTokenBuckets: Bool) -> [SilentLookupQuery] {
        var queries: [SilentLookupQuery] = []
        var i = 0
        while queries.count < count {
            let (account, slot) = drawToken(i, stream: stream)
            if !oneTokenBuckets || bucketSize(account: account, slot: slot) == 1 {
                queries.append(hitQuery(account: account, slot: slot, number: i))
            }
            i += 1
        }
        return queries
    }

    /// A silent lookup answered `interaction_required`: an account that never signed in (numbered past the stored
    /// ones), in a stored client and realm shape.
    func missQuery(number i: Int, stream: UInt64) -> SilentLookupQuery {
        let (account, slot) = drawToken(i, stream: stream)
        var query = hitQuery(account: account, slot: slot, number: i)
        query.homeAccountID = self.account(accounts + account).homeAccountID
        return query
    }

    func query(account: Int, slot: Int, scopes: [String]) -> SilentLookupQuery {
        let info = self.account(account)
        let bucket = bucket(account: account, slot: slot)
        return SilentLookupQuery(
            clientID: Self.clientIDs[bucket % 4], homeAccountID: info.homeAccountID, environment: Self.environment,
            realm: info.realms[bucket / 4], scopes: scopes, now: Self.queryNow, companionLoading: .onFirstAccess
        )
    }

    // MARK: Token responses

    /// A refresh-grant response (JSON bytes) for the stored access token `number` of stream `stream`, with the context
    /// an auth client would pass: the stored token's scopes (it replaces that token), client_info, a real-shaped
    /// id_token, `foci` for the family clients. Ingesting it replaces records and adds none.
    func tokenResponse(number: Int, stream: UInt64) throws -> (json: [UInt8], context: TokenRequestContext) {
        let (index, slot) = drawToken(number, stream: stream)
        let info = account(index)
        let bucket = bucket(account: index, slot: slot)
        let client = bucket % 4, realm = info.realms[bucket / 4]
        let now = Self.cachedAt + 900
        let seed = UInt64(number) &* 8 &+ 0x5EED_0000
        let header = Self.base64url(Array(#"{"typ":"JWT","alg":"RS256","kid":"nOo3ZDrODXEK1jKWhXslHR_KXEg"}"#.utf8))
        let claims = #"""
            {"aud":"\#(Self.clientIDs[client])","iss":"https://login.microsoftonline.com/\#(realm)/v2.0","iat":\#(now),"nbf":\#(now),"exp":\#(now + 3_600),"name":"User \#(index)","oid":"\#(info.objectID)","preferred_username":"user\#(index)@contoso\#(index % Self.tenantCount).example","rh":"0.AXkA\#(Self.secretText(seed: seed, length: 40).suffix(20))","sub":"\#(Self.secretText(seed: seed &+ 1, length: 80).suffix(43))","tid":"\#(realm)","uti":"\#(Self.secretText(seed: seed &+ 2, length: 60).suffix(22))","ver":"2.0"}
            """#
        let signature = String(Self.secretText(seed: seed &+ 3, length: 400).suffix(342))
        let idToken = header + "." + Self.base64url(Array(claims.utf8)) + "." + signature
        let scope = scopes(account: index, slot: slot).joined(separator: " ")
        let foci = client < Self.familyClientCount ? #","foci":"1""# : ""
        let json = #"""
            {"token_type":"Bearer","scope":"\#(scope)","expires_in":3599,"ext_expires_in":3599,"refresh_in":1799,"access_token":"\#(Self.secretText(seed: seed &+ 4, length: 1_040))","refresh_token":"\#(Self.secretText(seed: seed &+ 5, length: 1_050))","id_token":"\#(idToken)","client_info":"\#(Self.clientInfo(info))"\#(foci)}
            """#
        let context = TokenRequestContext(
            clientID: Self.clientIDs[client], authority: try Authority("https://login.microsoftonline.com/\(realm)"),
            requestedScopes: [scope], grantType: "refresh_token", now: now
        )
        return (Array(json.utf8), context)
    }

    // MARK: Deterministic bytes

    /// SplitMix64: a fixed, fast mixing function for repeatable data.
    static func mix(_ seed: UInt64) -> UInt64 {
        var z = seed &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    static func guid(seed: UInt64) -> String {
        let a = mix(seed), b = mix(a)
        func hex(_ value: UInt64, _ digits: Int) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: max(0, digits - text.count)) + text.suffix(digits)
        }
        return "\(hex(a >> 32, 8))-\(hex((a >> 16) & 0xFFFF, 4))-\(hex(a & 0xFFFF, 4))-\(hex(b >> 48, 4))-\(hex(b & 0xFFFF_FFFF_FFFF, 12))"
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    /// 64 KiB of sextets, sliced into the segments of JWT-shaped secrets.
    private static let pool: [UInt8] = (0..<(64 << 10)).map { UInt8(truncatingIfNeeded: mix(UInt64($0) &+ 0x5EC) & 63) }

    /// The header segment of every synthetic JWT: `{"typ":"JWT","alg":"RS256"}`.
    private static let jwtHeader = Array("eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9".utf8)

    /// The bytes of a JWT-shaped secret of `length` bytes (at least 38): `header.payload.signature`, each segment the
    /// unpadded base64url of some bytes, as an issuer's encoder writes it (a signature of 342 or 343 characters, for an
    /// RS256 signature of 256 bytes, when the length leaves room). Shorter ones are `header.filler`.
    static func secretBytes(seed: UInt64, length: Int) -> [UInt8] {
        var bytes = jwtHeader + [UInt8(ascii: ".")]
        let rest = length - bytes.count
        var signature = rest >= 400 ? 342 : 0
        var payload = signature > 0 ? rest - signature - 1 : rest
        // No encoder writes a segment of 4k + 1 characters: move one to the signature (343 is 257 bytes').
        if signature > 0, payload % 4 == 1 { payload -= 1; signature += 1 }
        let start = Int(mix(seed) % UInt64(pool.count - length))
        bytes += segment(pool[start..<(start + payload)])
        if signature > 0 { bytes += [UInt8(ascii: ".")] + segment(pool[(start + payload)..<(start + payload + signature)]) }
        return bytes
    }

    /// The characters of `sextets`, the last one's unused low bits cleared as an encoder leaves them.
    private static func segment(_ sextets: ArraySlice<UInt8>) -> [UInt8] {
        var values = Array(sextets)
        switch values.count % 4 {
        case 2: values[values.count - 1] &= 0x30
        case 3: values[values.count - 1] &= 0x3C
        default: break
        }
        return values.map { alphabet[Int($0)] }
    }

    static func secretText(seed: UInt64, length: Int) -> String {
        String(decoding: secretBytes(seed: seed, length: length), as: UTF8.self)
    }

    /// Unpadded base64url.
    static func base64url(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let count = min(3, bytes.count - index)
            var group = UInt32(bytes[index]) << 16
            if count > 1 { group |= UInt32(bytes[index + 1]) << 8 }
            if count > 2 { group |= UInt32(bytes[index + 2]) }
            for position in 0...count { output.append(alphabet[Int((group >> (18 - 6 * UInt32(position))) & 63)]) }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
