internal import TokenCacheMSAL
public import TokenCache
import Foundation

/// The one synthetic population that `cachetool bench` and the Benchmarks/ package measure: realistic, deterministic
/// contents for a token cache of any size, and the queries and token responses drawn from it.
///
/// It is SPI (`@_spi(Benchmarking)`), not API: it exists so that the built-in benchmark and the package-benchmark
/// suite (a separate package, which `package` access cannot reach) fill their stores with the same records, and an
/// app has no use for it. Everything is a pure function of (profile, seed, token number): two runs with the same
/// arguments write the same records and ask the same questions.
///
/// Per account (`default` profile, 23 records):
/// * home account id `<oid>.<home tenant>`; two realms: the home tenant and one guest tenant (tenants drawn from
///   1,009 GUIDs); one Account record per realm;
/// * 10 access tokens (scope sets) over the 8 buckets (4 clients × 2 realms): slots 0–7 one per bucket, slots 8 and
///   9 in two buckets chosen per account (the same one for 1/8 of accounts), so a bucket holds 1–3 tokens. Slot `s`
///   holds 1–3 scopes of resource `https://res<s>.example` (`read`, `write`, `admin`): disjoint sets within a
///   bucket. Secrets are JWT-shaped, 1,000–1,080 bytes; a record is at most ~1,890 bytes (inline in LMDB);
/// * one family refresh token (family "1", written by client 0) and one own refresh token for each of the two
///   non-family clients (2 and 3: their silent flows need one), secrets 1,000–1,099 bytes;
/// * one ID token per (client, realm): 8, secrets 1,100–1,299 bytes.
/// Plus one AppMetadata per client (clients 0 and 1 in family "1", 2 and 3 in none).
///
/// The `many-scopes` profile differs in the number of scope sets: 5–20 per account (uniform), slots 0–7 one per
/// bucket as far as they go and the rest hashed over the 8 buckets.
///
/// A population of N access tokens has as many accounts as it takes to hold N (the last one may hold fewer).
@_spi(Benchmarking)
public struct SyntheticPopulation: Sendable {
    public enum Profile: String, Sendable, CaseIterable {
        /// 10 scope sets (access tokens) per account.
        case `default`
        /// 5–20 scope sets per account.
        case manyScopes = "many-scopes"
    }

    public static let environment = "login.microsoftonline.com"
    /// The tokens' `cached_at`; ``queryNow`` is 10 minutes later: before refresh_on, an hour before expiry.
    public static let cachedAt: Int64 = 1_790_000_000
    public static let queryNow = cachedAt + 600
    public static let clientIDs = (0..<4).map { guid(seed: 0x5EC1_0000 &+ UInt64($0)) }
    public static let familyClientCount = 2
    public static let tenantCount = 1_009
    public static let realmsPerAccount = 2
    public static let bucketsPerAccount = 8
    static let permissions = ["read", "write", "admin"]

    /// Secret sizes in bytes, by kind.
    public static let accessTokenSecretBytes = 1_000...1_080
    public static let refreshTokenSecretBytes = 1_000...1_099
    public static let idTokenSecretBytes = 1_100...1_299

    public let profile: Profile
    public let seed: UInt64
    /// The number of access tokens.
    public let accessTokens: Int
    public let accounts: Int
    /// Number of the first access token of each account, and `accessTokens` last (many-scopes only).
    private let firstToken: [Int]
    /// Mixed into every derived value; 0 for seed 0, so that the default population is the benchmarks' historical one.
    private let salt: UInt64

    /// A population of `accessTokens` access tokens.
    public init(accessTokens: Int, profile: Profile = .default, seed: UInt64 = 0) {
        precondition(accessTokens >= 1, "a population holds at least one access token")
        self.profile = profile
        self.seed = seed
        self.accessTokens = accessTokens
        let salt = seed == 0 ? 0 : Self.mix(seed ^ 0x5EED_5EED)
        self.salt = salt
        switch profile {
        case .default:
            accounts = (accessTokens + 9) / 10
            firstToken = []
        case .manyScopes:
            var starts = [0]
            while starts.last! < accessTokens {
                starts.append(min(accessTokens, starts.last! + Self.manyScopesSlots(account: starts.count - 1, salt: salt)))
            }
            accounts = starts.count - 1
            firstToken = starts
        }
    }

    /// A population of `accounts` full accounts.
    public init(accounts: Int, profile: Profile = .default, seed: UInt64 = 0) {
        precondition(accounts >= 1, "a population holds at least one account")
        switch profile {
        case .default: self.init(accessTokens: accounts * 10, profile: profile, seed: seed)
        case .manyScopes:
            let salt = seed == 0 ? 0 : Self.mix(seed ^ 0x5EED_5EED)
            let tokens = (0..<accounts).reduce(0) { $0 + Self.manyScopesSlots(account: $1, salt: salt) }
            self.init(accessTokens: tokens, profile: profile, seed: seed)
        }
    }

    private static func manyScopesSlots(account: Int, salt: UInt64) -> Int {
        5 + Int(mix(UInt64(account) &+ 0x5C0B_E5 &+ salt) % 16)
    }

    /// The range of scope sets (access tokens) a full account holds.
    public var scopeSetsPerAccount: ClosedRange<Int> {
        switch profile {
        case .default: 10...10
        case .manyScopes: 5...20
        }
    }

    /// Access tokens of account `account`.
    public func accessTokenCount(account: Int) -> Int {
        switch profile {
        case .default: min(10, accessTokens - account * 10)
        case .manyScopes: firstToken[account + 1] - firstToken[account]
        }
    }

    /// The account and slot of access token number `number` (0..<accessTokens).
    public func location(ofToken number: Int) -> (account: Int, slot: Int) {
        switch profile {
        case .default:
            return (number / 10, number % 10)
        case .manyScopes:
            var low = 0, high = accounts  // firstToken[low] <= number < firstToken[high]
            while high - low > 1 {
                let middle = (low + high) / 2
                if firstToken[middle] <= number { low = middle } else { high = middle }
            }
            return (low, number - firstToken[low])
        }
    }

    /// The record counts a store holding exactly this population has.
    public var expectedCounts: [EntityKind: Int] {
        [.accessToken: accessTokens, .account: 2 * accounts, .refreshToken: 3 * accounts, .idToken: 8 * accounts, .appMetadata: 4]
    }

    public var recordCount: Int { expectedCounts.values.reduce(0, +) }

    // MARK: Accounts and tokens

    public struct AccountInfo: Sendable {
        public var objectID: String
        public var homeAccountID: String
        /// Home tenant, then a guest tenant.
        public var realms: [String]
    }

    public static func tenant(_ index: Int) -> String { tenants[index] }
    private static let tenants = (0..<tenantCount).map { guid(seed: UInt64($0) &+ 0x7E7A_0000) }

    /// Account number `index`: any `Int` is an account, stored or not (those at or past ``accounts`` are not).
    public func account(_ index: Int) -> AccountInfo {
        let objectID = Self.guid(seed: UInt64(index) &* 2 &+ 0xACC0_0000 &+ salt)
        let home = index % Self.tenantCount
        var guest = Int(Self.mix(UInt64(index) &+ 0x6E57) % UInt64(Self.tenantCount))
        if guest == home { guest = (guest + 1) % Self.tenantCount }
        return AccountInfo(objectID: objectID, homeAccountID: objectID + "." + Self.tenant(home), realms: [Self.tenant(home), Self.tenant(guest)])
    }

    /// Bucket 0–7 of an account's AT slot: client `bucket % 4`, realm `bucket / 4`.
    public func bucket(account: Int, slot: Int) -> Int {
        switch (profile, slot) {
        case (_, 0..<8): slot
        case (.default, 8): account % 8
        case (.default, _): (account / 8 + 3) % 8
        case (.manyScopes, _): Int(Self.mix(UInt64(account) &* 32 &+ UInt64(slot) &+ 0xB0C7 &+ salt) % 8)
        }
    }
    public static func clientIndex(bucket: Int) -> Int { bucket % 4 }
    public static func realmIndex(bucket: Int) -> Int { bucket / 4 }

    public static func resource(_ slot: Int) -> String { "https://res\(slot).example" }

    /// The scopes of an AT slot: 1–3 of its own resource's.
    public func scopes(account: Int, slot: Int) -> [String] {
        let count = 1 + (account &+ slot) % 3
        let first = (account / 3 &+ slot) % Self.permissions.count
        return (0..<count).map { Self.resource(slot) + "/" + Self.permissions[(first + $0) % Self.permissions.count] }
    }

    /// The number of access tokens in the bucket of `(account, slot)`.
    public func bucketSize(account: Int, slot: Int) -> Int {
        let bucket = bucket(account: account, slot: slot)
        return (0..<accessTokenCount(account: account)).count { self.bucket(account: account, slot: $0) == bucket }
    }

    public func accessToken(account: Int, slot: Int) -> AccessToken {
        accessToken(account: account, slot: slot, info: self.account(account))
    }

    func accessToken(account: Int, slot: Int, info: AccountInfo) -> AccessToken {
        let bucket = bucket(account: account, slot: slot)
        let seed = UInt64(account) &* 64 &+ UInt64(slot) &+ salt
        return AccessToken(
            homeAccountID: info.homeAccountID, environment: Self.environment, clientID: Self.clientIDs[Self.clientIndex(bucket: bucket)],
            realm: info.realms[Self.realmIndex(bucket: bucket)], target: scopes(account: account, slot: slot).joined(separator: " "),
            secret: Self.secret(seed: seed, length: 1_000 + Int(Self.mix(seed &+ 0xA7) % 81)),
            cachedAt: Self.cachedAt, expiresOn: Self.cachedAt + 3_599, extendedExpiresOn: Self.cachedAt + 7_199,
            refreshOn: Self.cachedAt + 1_800
        )
    }

    static func clientInfo(_ info: AccountInfo) -> String {
        base64url(Array(#"{"uid":"\#(info.objectID)","utid":"\#(info.realms[0])"}"#.utf8))
    }

    /// Everything account `index` has in the store but its access tokens: 2 Accounts, 8 ID tokens, 3 refresh tokens.
    public func companions(account index: Int) -> (accounts: [Account], idTokens: [IDToken], refreshTokens: [RefreshToken]) {
        companions(account: index, info: account(index))
    }

    func companions(account index: Int, info: AccountInfo) -> (accounts: [Account], idTokens: [IDToken], refreshTokens: [RefreshToken]) {
        let clientInfo = Self.clientInfo(info)
        let seed = UInt64(index) &* 64 &+ 32 &+ salt
        var accounts: [Account] = [], idTokens: [IDToken] = [], refreshTokens: [RefreshToken] = []
        for (r, realm) in info.realms.enumerated() {
            accounts.append(
                Account(
                    homeAccountID: info.homeAccountID, environment: Self.environment, realm: realm, localAccountID: info.objectID,
                    username: "user\(index)@contoso\(index % Self.tenantCount).example", authorityType: "MSSTS",
                    accountSource: "authorization_code", name: "User \(index)", clientInfo: clientInfo
                )
            )
            for client in 0..<Self.clientIDs.count {
                let idSeed = seed &+ UInt64(r * 8 + client)
                idTokens.append(
                    IDToken(
                        homeAccountID: info.homeAccountID, environment: Self.environment, clientID: Self.clientIDs[client], realm: realm,
                        secret: Self.secret(seed: idSeed, length: 1_100 + Int(Self.mix(idSeed) % 200))
                    )
                )
            }
        }
        for client in [0] + Array(Self.familyClientCount..<Self.clientIDs.count) {
            let rtSeed = seed &+ 20 &+ UInt64(client)
            refreshTokens.append(
                RefreshToken(
                    homeAccountID: info.homeAccountID, environment: Self.environment, clientID: Self.clientIDs[client],
                    secret: Self.secret(seed: rtSeed, length: 1_000 + Int(Self.mix(rtSeed) % 100)),
                    familyID: client < Self.familyClientCount ? "1" : nil, target: "openid profile offline_access",
                    lastModificationTime: Self.cachedAt
                )
            )
        }
        return (accounts, idTokens, refreshTokens)
    }

    /// Everything account `index` has in the store, in one batch of puts.
    public func put(account index: Int, into writer: CacheWriter) throws {
        let info = account(index)
        for slot in 0..<accessTokenCount(account: index) { try writer.put(accessToken(account: index, slot: slot, info: info)) }
        let companions = companions(account: index, info: info)
        for record in companions.accounts { try writer.put(record) }
        for record in companions.idTokens { try writer.put(record) }
        for record in companions.refreshTokens { try writer.put(record) }
    }

    public static var appMetadata: [AppMetadata] {
        clientIDs.enumerated().map { client, id in
            AppMetadata(clientID: id, environment: environment, familyID: client < familyClientCount ? "1" : nil)
        }
    }

    /// The records of a run of whole accounts, generated ahead of the transaction that writes them.
    struct Batch: Sendable {
        var accessTokens: [AccessToken] = []
        var accounts: [Account] = []
        var idTokens: [IDToken] = []
        var refreshTokens: [RefreshToken] = []
        var count: Int { accessTokens.count + accounts.count + idTokens.count + refreshTokens.count }
    }

    func batch(_ indices: ArraySlice<Int>) -> Batch {
        var batch = Batch()
        for index in indices {
            let info = account(index)
            for slot in 0..<accessTokenCount(account: index) { batch.accessTokens.append(accessToken(account: index, slot: slot, info: info)) }
            let companions = companions(account: index, info: info)
            batch.accounts += companions.accounts
            batch.idTokens += companions.idTokens
            batch.refreshTokens += companions.refreshTokens
        }
        return batch
    }

    /// How ``populate(_:recordsPerTransaction:layout:progress:)`` writes the records. Either gives the same records
    /// under the same keys (each the key a put chooses, FORMAT.md §4.3); they differ in how LMDB lays the pages out,
    /// and in time.
    public enum Layout: Sendable {
        /// Put by put (`CacheWriter.put`), accounts in number order: keys land at random places, as an app's writes
        /// lay a store out (LMDB's leaf pages hold 1.5 records of the large kinds on average). Slow at scale: each
        /// transaction rewrites pages all over the file.
        case asWritten
        /// Bulk-loaded in key order, sealed ahead on every core (`populateInKeyOrder`): about a third of the time at a
        /// million access tokens, and full pages (two records of the large kinds each), so a file about 30%
        /// smaller than ``asWritten``'s. Lookups and ingests measured on the two layouts agree within run-to-run noise.
        case keyOrdered
    }

    /// Fills an empty store with the population, in durable write transactions of about `recordsPerTransaction`
    /// records (whole accounts), laid out as `layout` says, calling `progress` with the number of records written
    /// after each, and checks the counts at the end.
    public func populate(
        _ cache: TokenStore, recordsPerTransaction: Int = 10_000, layout: Layout = .asWritten, progress: (Int) -> Void = { _ in }
    ) throws {
        let written: Int
        switch layout {
        case .asWritten: written = try populateByPuts(cache, recordsPerTransaction: recordsPerTransaction, progress: progress)
        case .keyOrdered: written = try populateInKeyOrder(cache, recordsPerTransaction: recordsPerTransaction, progress: progress)
        }
        try cache.write { writer in
            for metadata in Self.appMetadata { try writer.put(metadata) }
        }
        progress(written + 4)
        let counts = try cache.info().recordCounts
        guard counts == expectedCounts else {
            throw TokenCacheError(.invalidArgument, "the synthetic population was not written as planned: record counts \(counts)")
        }
    }

    /// Whole accounts of about `recordsPerTransaction` records each, in `order`.
    func transactionRuns(_ order: [Int], recordsPerTransaction: Int) -> [ArraySlice<Int>] {
        var runs: [ArraySlice<Int>] = []
        var first = 0
        while first < order.count {
            var last = first, records = 0
            while last < order.count && (records == 0 || records + accessTokenCount(account: order[last]) + 13 <= recordsPerTransaction) {
                records += accessTokenCount(account: order[last]) + 13
                last += 1
            }
            runs.append(order[first..<last])
            first = last
        }
        return runs
    }

    /// ``Layout/asWritten``: puts, the records of the next transaction generated on another thread while one commits.
    /// Returns the number of records written.
    private func populateByPuts(_ cache: TokenStore, recordsPerTransaction: Int, progress: (Int) -> Void) throws -> Int {
        let runs = transactionRuns(Array(0..<accounts), recordsPerTransaction: recordsPerTransaction)
        final class Slot: @unchecked Sendable { var batch: Batch? }  // handed over through DispatchGroup.wait
        var current = batch(runs[0])
        var written = 0
        for number in runs.indices {
            let slot = Slot(), group = DispatchGroup()
            if number + 1 < runs.count {
                let run = runs[number + 1], population = self
                DispatchQueue.global().async(group: group) { slot.batch = population.batch(run) }
            }
            try cache.write { writer in
                for record in current.accessTokens { try writer.put(record) }
                for record in current.accounts { try writer.put(record) }
                for record in current.idTokens { try writer.put(record) }
                for record in current.refreshTokens { try writer.put(record) }
            }
            written += current.count
            progress(written)
            group.wait()
            if let next = slot.batch { current = next }
        }
        return written
    }

    // MARK: Queries

    /// Token number `i` of a uniform draw over the whole population (all its access tokens equally likely).
    public func drawToken(_ i: Int, stream: UInt64) -> (account: Int, slot: Int) {
        location(ofToken: Int(Self.mix(UInt64(i) &+ stream &+ salt) % UInt64(accessTokens)))
    }

    /// A silent lookup that hits: a stored access token, asked for by one of its scopes, at ``queryNow``.
    public func hitQuery(account: Int, slot: Int, number i: Int, companionLoading: CompanionLoading = .onFirstAccess) -> SilentLookupQuery {
        let scopes = scopes(account: account, slot: slot)
        return query(account: account, slot: slot, scopes: [scopes[Int(Self.mix(UInt64(i) &+ 0x5C0 &+ salt) % UInt64(scopes.count))]],
                     companionLoading: companionLoading)
    }

    /// `count` hit queries over the whole population: the `i`-th asks for token ``drawToken(_:stream:)`` of `i`.
    public func hitQueries(count: Int, stream: UInt64) -> [SilentLookupQuery] {
        (0..<count).map { i in
            let (account, slot) = drawToken(i, stream: stream)
            return hitQuery(account: account, slot: slot, number: i)
        }
    }

    /// A silent lookup answered `refresh`: a stored bucket, a scope no token of it has, with refresh tokens to redeem.
    public func refreshQuery(account: Int, slot: Int, companionLoading: CompanionLoading = .onFirstAccess) -> SilentLookupQuery {
        query(account: account, slot: slot, scopes: [Self.resource(slot) + "/uncached"], companionLoading: companionLoading)
    }

    /// A silent lookup answered `interaction_required`: an account that never signed in (numbered past the stored ones),
    /// in a stored client and realm shape.
    public func missQuery(number i: Int) -> SilentLookupQuery {
        let (account, slot) = drawToken(i, stream: 0x3155)
        var query = hitQuery(account: account, slot: slot, number: i)
        query.homeAccountID = self.account(accounts + account).homeAccountID
        return query
    }

    func query(account: Int, slot: Int, scopes: [String], companionLoading: CompanionLoading) -> SilentLookupQuery {
        let info = self.account(account)
        let bucket = bucket(account: account, slot: slot)
        return SilentLookupQuery(
            clientID: Self.clientIDs[Self.clientIndex(bucket: bucket)], homeAccountID: info.homeAccountID,
            environment: Self.environment, realm: info.realms[Self.realmIndex(bucket: bucket)], scopes: scopes,
            now: Self.queryNow, companionLoading: companionLoading
        )
    }

    // MARK: Token responses

    /// A refresh-grant response (JSON bytes) for a stored access token drawn uniformly, with the context an auth
    /// client would pass: same scopes as the stored token (which it replaces), client_info, a real-shaped id_token,
    /// `foci` for the family clients. Ingesting it replaces records and adds none.
    public func tokenResponse(number: Int) -> (json: [UInt8], context: TokenRequestContext) {
        let (index, slot) = tokenResponseLocation(number: number)
        let info = account(index)
        let bucket = bucket(account: index, slot: slot)
        let client = Self.clientIndex(bucket: bucket), realm = info.realms[Self.realmIndex(bucket: bucket)]
        let now = Self.cachedAt + 900
        let seed = UInt64(number) &* 8 &+ 0x5EED_0000 &+ salt
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
            clientID: Self.clientIDs[client], authority: try! Authority("https://login.microsoftonline.com/\(realm)"),
            requestedScopes: [scope], grantType: "refresh_token", now: now
        )
        return (Array(json.utf8), context)
    }

    /// The home account id of the account ``tokenResponse(number:)`` answers for.
    public func tokenResponseHomeAccountID(number: Int) -> String {
        account(tokenResponseLocation(number: number).account).homeAccountID
    }

    private func tokenResponseLocation(number: Int) -> (account: Int, slot: Int) {
        location(ofToken: Int(Self.mix(UInt64(number) &+ 0x16E5 &+ salt) % UInt64(accessTokens)))
    }

    // MARK: Deterministic bytes

    /// SplitMix64: a fixed, fast mixing function for repeatable data.
    public static func mix(_ seed: UInt64) -> UInt64 {
        var z = seed &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public static func guid(seed: UInt64) -> String {
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

    /// A JWT-shaped secret of `length` bytes (at least 38).
    public static func secret(seed: UInt64, length: Int) -> Secret { Secret(bytes: secretBytes(seed: seed, length: length)) }

    static func secretText(seed: UInt64, length: Int) -> String { secret(seed: seed, length: length).reveal() }

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
