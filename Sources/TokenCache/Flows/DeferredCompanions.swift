import Synchronization

/// What identifies a lookup's companions: enough to read them again in another transaction.
struct CompanionRequest: Sendable {
    var homeAccountID: String
    /// `P(hid)`, already derived by the lookup: where the ID token and the account are.
    var accountPrefix: [UInt8]
    /// The on-behalf-of partition's prefix, where its refresh tokens are; nil for the account's own.
    var partitionPrefix: [UInt8]?
    /// Where the refresh tokens are.
    var refreshTokenPrefix: [UInt8] { partitionPrefix ?? accountPrefix }
    var clientID: String
    var environment: String
    /// The realms to take the ID token and account from, most wanted first (the realm the access token was found
    /// in, then the query's candidates).
    var profileRealms: [String]
    /// Where the access token was written: the first host to probe for the account.
    var accessTokenEnvironment: String?
}

/// Reads a lookup's companions in a read transaction of its own: all a result needs to load them later. A protocol,
/// so that a result holds a way to read, not the store.
protocol CompanionReading: Sendable {
    /// The companions `request` names, read from the current state; `lookupSnapshot` is the id of the lookup's
    /// snapshot, to say whether the state is still that one.
    func readCompanions(_ request: CompanionRequest, lookupSnapshot: Int) throws -> SilentLookupCompanions
}

/// The companions of a hit, read on first access (``CompanionLoading/onFirstAccess``).
///
/// Holds no transaction, only the request and the id of the lookup's snapshot: the first access opens one read
/// transaction, reads all companions in it and keeps them, so every later access (from any thread, through any
/// copy of the result) sees the same values. Keeps the store open while it lives.
final class DeferredCompanions: Sendable {
    private let source: any CompanionReading
    private let request: CompanionRequest
    private let lookupSnapshot: Int
    /// Guards `loaded`. The value lives beside the lock, not in it: a `Mutex<SilentLookupCompanions?>` is destroyed
    /// through the generic value witnesses of its optional fields (about 1,000 instructions for every hit, most of
    /// whose companions are never loaded), a stored property of this final class by specialised code.
    private let lock = Mutex<Void>(())
    // SAFETY: read and written only under `lock`.
    nonisolated(unsafe) private var loaded: SilentLookupCompanions?

    init(source: any CompanionReading, request: CompanionRequest, lookupSnapshot: Int) {
        self.source = source
        self.request = request
        self.lookupSnapshot = lookupSnapshot
    }

    /// The read runs outside the lock: a thread inside a transaction of its own may ask for these companions while
    /// another thread loads them, and a read under the lock could then wait (a map resize waits for every live
    /// transaction) for a thread that waits for the lock. Two first accesses may both read; the first to publish
    /// wins, so every access still sees one value.
    func load() throws -> SilentLookupCompanions {
        if let published = lock.withLock({ _ in loaded }) { return published }
        let companions = try source.readCompanions(request, lookupSnapshot: lookupSnapshot)
        return lock.withLock { _ in
            if let published = loaded { return published }
            loaded = companions
            return companions
        }
    }
}

extension RecordStore: CompanionReading {
    func readCompanions(_ request: CompanionRequest, lookupSnapshot: Int) throws -> SilentLookupCompanions {
        try read { reader in try reader.companions(for: request, aliases: aliases, lookupSnapshot: lookupSnapshot) }
    }
}
