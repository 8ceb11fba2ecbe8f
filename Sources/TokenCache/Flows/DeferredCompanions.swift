import Synchronization

/// What identifies a lookup's companions: enough to read them again in another transaction.
struct CompanionRequest: Sendable {
    var homeAccountID: String
    /// `P(hid)`, already derived by the lookup.
    var accountPrefix: [UInt8]
    var clientID: String
    var environment: String
    /// The realms to take the ID token and account from, most wanted first (the realm the access token was found
    /// in, then the query's candidates).
    var profileRealms: [String]
    /// Where the access token was written: the first host to probe for the account.
    var accessTokenEnvironment: String?
}

/// The companions of a hit, read on first access (``CompanionLoading/onFirstAccess``).
///
/// Holds no transaction, only the request and the id of the lookup's snapshot: the first access opens one read
/// transaction, reads all companions in it and keeps them, so every later access (from any thread, through any
/// copy of the result) sees the same values. Keeps the store open while it lives.
final class DeferredCompanions: Sendable {
    private let store: RecordStore
    private let aliases: EnvironmentAliases
    private let request: CompanionRequest
    private let lookupSnapshot: Int
    private let loaded = Mutex<SilentLookupCompanions?>(nil)

    init(store: RecordStore, aliases: EnvironmentAliases, request: CompanionRequest, lookupSnapshot: Int) {
        self.store = store
        self.aliases = aliases
        self.request = request
        self.lookupSnapshot = lookupSnapshot
    }

    func load() throws -> SilentLookupCompanions {
        try loaded.withLock { loaded in
            if let loaded { return loaded }
            let companions = try store.read { reader in
                try reader.companions(for: request, aliases: aliases, lookupSnapshot: lookupSnapshot)
            }
            loaded = companions
            return companions
        }
    }
}
