internal import TokenCache
internal import TokenCacheRecords
/// Collects imported entities into one ``MSALCacheContent``, one entity per identity, resolving repeats with
/// ``ImportMerge``.
///
/// A file can name one identity twice: MSAL Python keeps a refresh token per scope set (one token here, whose
/// owner is the client or family), and identities compare ASCII-case-insensitively and scopes as sets
/// (Docs/Semantics.md, "Entities and their identity") where the SDKs' keys did not. Folding by the engine's
/// identity gives exactly what the store would hold after writing the entries in order with the import rule,
/// without touching a store. Memory grows with the entities: this is for whole-file use (tests, a dry run, an
/// export of an import); a store import applies ``ImportMerge`` per entry against the store instead.
struct MSALImportFold {
    private var accessTokens: [String: AccessToken] = [:]
    private var refreshTokens: [String: RefreshToken] = [:]
    private var idTokens: [String: IDToken] = [:]
    private var accounts: [String: Account] = [:]
    private var appMetadata: [String: AppMetadata] = [:]
    /// Unknown sections, by name; a later one of the same name replaces an earlier one.
    var unknownSections: [String: JSONValue] = [:]

    /// How many entities were replaced or dropped because their identity was already present.
    private(set) var mergedCount = 0

    init() {}

    mutating func add(_ entity: MSALEntity) {
        switch entity {
        case .accessToken(let token): Self.insert(token, Self.identity(of: token), into: &accessTokens, merged: &mergedCount, wins: ImportMerge.laterWins(ImportMerge.stamp(of:)))
        case .refreshToken(let token): Self.insert(token, Self.identity(of: token), into: &refreshTokens, merged: &mergedCount, wins: ImportMerge.refreshTokenWins)
        case .idToken(let token): Self.insert(token, Self.identity(of: token), into: &idTokens, merged: &mergedCount, wins: ImportMerge.idTokenWins)
        case .account(let account): Self.insert(account, Self.identity(of: account), into: &accounts, merged: &mergedCount, wins: ImportMerge.laterWins(ImportMerge.stamp(of:)))
        case .appMetadata(let metadata): Self.insert(metadata, Self.identity(of: metadata), into: &appMetadata, merged: &mergedCount, wins: ImportMerge.laterWins(ImportMerge.stamp(of:)))
        }
    }

    /// Maps an unknown-section entry; entity entries go through ``MSALEntityMapping``.
    mutating func add(_ entry: MSALCacheEntry) throws(MSALImportError) {
        guard case .unknown = entry.section else {
            add(try MSALEntityMapping.entity(from: entry))
            return
        }
        do { unknownSections[entry.sectionName] = try MSALFieldValues.jsonValue(entry.value) } catch {
            throw MSALImportError(.invalidValue, "the section holds a number outside the range of a double", offset: entry.offset, section: entry.sectionName)
        }
    }

    /// Everything folded so far.
    var content: MSALCacheContent {
        var content = MSALCacheContent()
        content.accessTokens = Array(accessTokens.values)
        content.refreshTokens = Array(refreshTokens.values)
        content.idTokens = Array(idTokens.values)
        content.accounts = Array(accounts.values)
        content.appMetadata = Array(appMetadata.values)
        content.unknownSections = unknownSections
        return content
    }

    private static func insert<Entity>(
        _ entity: Entity, _ identity: String, into table: inout [String: Entity], merged: inout Int, wins: (Entity, Entity) -> Bool
    ) {
        if let existing = table[identity] {
            merged += 1
            if wins(existing, entity) { table[identity] = entity }
        } else {
            table[identity] = entity
        }
    }

    // Identity strings: the key fields in their canonical comparison forms, each length-prefixed so that no
    // two different tuples give one string.
    private static func joined(_ parts: [String]) -> String { parts.map { "\($0.utf8.count):\($0)" }.joined() }

    static func identity(of token: AccessToken) -> String {
        let scopes = (try? ScopeSet(parsing: token.target))?.canonical ?? token.target
        let tokenType = MSALCacheKey.isBearer(token.tokenType) ? "bearer" : token.tokenType!.asciiLowercased
        return joined([
            token.homeAccountID.asciiLowercased, token.environment.asciiLowercased, token.clientID.asciiLowercased,
            token.realm.asciiLowercased, scopes, tokenType, token.keyID ?? "", token.extendedCacheKey?.asciiLowercased ?? "",
            token.userAssertionHash ?? "",
        ])
    }

    static func identity(of token: RefreshToken) -> String {
        let owner: String
        switch token.owner {
        case .client(let client): owner = "c" + client.asciiLowercased
        case .family(let family): owner = "f" + family.asciiLowercased
        }
        return joined([token.homeAccountID.asciiLowercased, token.environment.asciiLowercased, owner, token.userAssertionHash ?? ""])
    }

    static func identity(of token: IDToken) -> String {
        joined([token.homeAccountID, token.environment, token.clientID, token.realm].map(\.asciiLowercased))
    }

    static func identity(of account: Account) -> String {
        joined([account.homeAccountID, account.environment, account.realm].map(\.asciiLowercased))
    }

    static func identity(of metadata: AppMetadata) -> String {
        joined([metadata.clientID, metadata.environment].map(\.asciiLowercased))
    }
}
