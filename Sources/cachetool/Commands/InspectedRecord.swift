import TokenCache

/// One record as `cachetool inspect` shows, counts and filters it, whatever its kind.
struct InspectedRecord {
    var kind: EntityKind
    var homeAccountID: String?
    var username: String?
    var environment: String
    var realm: String?
    var clientID: String?
    var familyID: String?
    var target: String?
    /// Set only when it is not `Bearer`.
    var tokenType: String?
    var expiresOn: Int64?
    var refreshOn: Int64?
    var secret: Secret?

    init(_ account: Account) {
        kind = .account
        homeAccountID = account.homeAccountID
        username = account.username
        environment = account.environment
        realm = account.realm
    }

    init(_ token: AccessToken) {
        kind = .accessToken
        homeAccountID = token.homeAccountID
        environment = token.environment
        realm = token.realm
        clientID = token.clientID
        target = token.target
        tokenType = token.tokenType.flatMap { $0.lowercased() == "bearer" || $0.isEmpty ? nil : $0 }
        expiresOn = token.expiresOn
        refreshOn = token.refreshOn
        secret = token.secret
    }

    init(_ token: RefreshToken) {
        kind = .refreshToken
        homeAccountID = token.homeAccountID
        environment = token.environment
        realm = token.realm
        clientID = token.clientID
        familyID = token.familyID
        target = token.target
        expiresOn = token.expiresOn
        secret = token.secret
    }

    init(_ token: IDToken) {
        kind = .idToken
        homeAccountID = token.homeAccountID
        environment = token.environment
        realm = token.realm
        clientID = token.clientID
        secret = token.secret
    }

    init(_ metadata: AppMetadata) {
        kind = .appMetadata
        environment = metadata.environment
        clientID = metadata.clientID
        familyID = metadata.familyID
    }

    /// Where its expiry stands at `now`, as every view counts it; nil for a record that does not expire.
    func expiry(now: Int64) -> TokenExpiryState? {
        expiresOn.map { TokenExpiryState(expiresOn: $0, refreshOn: refreshOn, now: now) }
    }
}

/// The records `inspect` shows beyond what the library's ``RecordFilter`` (home account, client) selects: kinds,
/// an expiry window and a cloud.
struct InspectSelection {
    /// The kinds shown.
    var kinds: Set<EntityKind> = Set(EntityKind.allCases)
    /// Records whose expiry is at or before `now` (`--expired`).
    var expired = false
    /// Records that expire after `now` and at most this many seconds later (`--expiring-within`).
    var expiringWithin: Int64? = nil
    /// Records in this host's cloud (its alias group), `--environment`.
    var environment: String? = nil

    /// Whether any expiry condition is set: then only records that expire can be shown.
    var selectsByExpiry: Bool { expired || expiringWithin != nil }

    func admits(_ record: InspectedRecord, now: Int64) -> Bool {
        guard kinds.contains(record.kind) else { return false }
        if let environment, !EnvironmentAliases.builtIn.areAliases(environment, record.environment) { return false }
        guard selectsByExpiry else { return true }
        guard let expiresOn = record.expiresOn else { return false }
        if expiresOn <= now { return expired }
        guard let window = expiringWithin else { return false }
        return UInt64(bitPattern: expiresOn &- now) <= UInt64(max(window, 0))
    }
}
