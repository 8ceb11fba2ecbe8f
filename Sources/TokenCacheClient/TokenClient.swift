// Every caller of the client names the library's types: the configuration it opens, the token responses its
// refresh returns, the accounts and errors it gets back. So the client re-exports the library, and an app writes one
// import.
@_exported public import TokenCache
import Metrics

/// The token cache as an auth client uses it: async, with the whole silent flow in one call
/// (``token(for:refresh:)``; <doc:GettingStarted> shows an app's use of it, <doc:TheSilentFlow> what it does).
///
/// **Concurrency.** One client serves a whole process; it is `Sendable`, and its methods may be called from any
/// task at once. Reads (lookups, account lists) run inline on the caller's task: they take microseconds and never
/// wait for a writer (LMDB readers see a snapshot). Writes (ingesting a response, a refresh's rotation, signing
/// out) run on a thread of the client's own, because each one waits for an `fsync` and for any other process's
/// write, and a cooperative thread must not block.
///
/// **Time.** Every expiry is judged against the injected ``WallClock`` (the system clock by default); no method
/// needs a `now:`, and those that take one use it instead of the clock.
public final class TokenClient: Sendable {
    /// The store underneath. Not public: an app that needs the store itself (operator commands, raw records) opens
    /// it and makes the client with ``init(store:clock:refreshLeaseDuration:answerCacheCapacity:changePollInterval:observability:refresh:)``,
    /// so the store it holds is its own and no second path to it hides in the client.
    package let store: TokenStore
    /// The clock every expiry is judged against.
    public let clock: any WallClock

    /// How long a refresh may take before another process may redeem the same refresh token.
    public let refreshLeaseDuration: Duration
    /// The token-endpoint call ``token(for:)`` redeems refresh tokens with; nil when none was given.
    public let refresh: Refresh?

    let writer: WriteThread
    let answers: AnswerCache
    let feed: ChangeFeed
    let log: ClientLog
    let metrics: ClientMetrics
    let refreshes = SingleFlight<FlightKey, TokenResult>()
    /// Redeemed responses whose store failed for a while, stored again in the background.
    let pendingStores: PendingStores
    let counters = ClientCounters()

    /// A client of an open store.
    ///
    /// - Parameter refreshLeaseDuration: how long a refresh may take (the caller's token-endpoint call included)
    ///   before another process sharing the store may redeem the same refresh token: longer than the HTTP client's
    ///   timeout. A process that crashes while refreshing holds the others up this long at most.
    /// - Parameter answerCacheCapacity: how many answers the in-process L1 keeps (0: none). See ``TokenClient``.
    /// - Parameter changePollInterval: how often, while someone listens to ``changes()``, the client looks for other
    ///   processes' commits (one read of a word in the map): the longest they wait to be reported.
    /// - Parameter observability: the logger (none by default) and whether identifiers are logged as they are.
    /// - Parameter refresh: the app's token-endpoint call (`grant_type=refresh_token`), for ``token(for:)``; without
    ///   it, only ``token(for:refresh:)`` can refresh.
    public convenience init(
        store: TokenStore, clock: any WallClock = .system, refreshLeaseDuration: Duration = .seconds(30), answerCacheCapacity: Int = 1024,
        changePollInterval: Duration = .milliseconds(100), observability: ClientObservability = .standard, refresh: Refresh? = nil
    ) {
        self.init(
            store: store, clock: clock, refreshLeaseDuration: refreshLeaseDuration, answerCacheCapacity: answerCacheCapacity,
            changePollInterval: changePollInterval, observability: observability, refresh: refresh, pendingStores: PendingStores()
        )
    }

    /// A client whose late stores pause as `pendingStores` says (tests lengthen the pauses).
    init(
        store: TokenStore, clock: any WallClock, refreshLeaseDuration: Duration, answerCacheCapacity: Int, changePollInterval: Duration,
        observability: ClientObservability, refresh: Refresh?, pendingStores: PendingStores
    ) {
        self.pendingStores = pendingStores
        self.refresh = refresh
        log = ClientLog(observability)
        metrics = ClientMetrics(factory: observability.metricsFactory ?? MetricsSystem.factory)
        answers = AnswerCache(capacity: max(0, answerCacheCapacity))
        feed = ChangeFeed(interval: changePollInterval)
        self.store = store
        self.clock = clock
        self.refreshLeaseDuration = refreshLeaseDuration
        writer = WriteThread(name: "token-cache writer")
    }

    deinit {
        // Whoever still iterates `changes()` learns that nothing more will come. A store still pending goes on without
        // the client: it holds the store, the write thread and the feed until it ends (at its bound at the latest).
        feed.finishAll()
    }

    /// A client of the store `configuration` names, created if it does not exist yet.
    public convenience init(
        configuration: Configuration, clock: any WallClock = .system, refreshLeaseDuration: Duration = .seconds(30), answerCacheCapacity: Int = 1024,
        changePollInterval: Duration = .milliseconds(100), observability: ClientObservability = .standard, refresh: Refresh? = nil
    ) throws {
        self.init(
            store: try TokenStore.openOrCreate(configuration), clock: clock, refreshLeaseDuration: refreshLeaseDuration,
            answerCacheCapacity: answerCacheCapacity, changePollInterval: changePollInterval, observability: observability,
            refresh: refresh
        )
    }

    /// What this client did so far: requests, cache hits, refreshes, joined refreshes.
    public var statistics: ClientStatistics { counters.snapshot(answerCacheHits: answers.hits) }

    // MARK: Reads (inline)

    /// The store's answer to `request`, without redeeming anything: whether a usable access token is cached, else
    /// which refresh token would be redeemed (``TokenStore/silentLookup(_:)``).
    public func lookup(_ request: TokenRequest, now: Int64? = nil) async throws -> SilentLookupResult {
        try store.silentLookup(request.query(now: now ?? clock.now()))
    }

    /// The signed-in users, one per home account, with their home tenant's profile and the claims of their ID
    /// token for `clientID`.
    ///
    /// - Parameters:
    ///   - clientID: only the accounts this client can use silently (a refresh token of its own, or of a family it
    ///     is or may be in); nil lists every account.
    ///   - environment: only accounts of this cloud (by alias group).
    ///   - username: only accounts with this username (case-insensitive).
    public func accounts(clientID: String? = nil, environment: String? = nil, username: String? = nil) async throws -> [AccountInfo] {
        try accountInfos(listedFor: clientID, claimsOf: clientID, environment: environment, username: username)
    }

    /// The accounts `listedFor` can use silently (nil: every account), with the claims of their ID token for
    /// `claimsOf` (nil: any client's), in one read.
    private func accountInfos(listedFor: String?, claimsOf: String?, environment: String? = nil, username: String? = nil) throws -> [AccountInfo] {
        try store.read { reader in
            try reader.accounts(clientID: listedFor, environment: environment, username: username).accounts.compactMap { summary in
                try Self.accountInfo(summary, clientID: claimsOf, reader: reader)
            }
        }
    }

    /// The account with this home account id (its home tenant's profile), or nil when none is signed in.
    public func account(homeAccountID: String, clientID: String? = nil) async throws -> AccountInfo? {
        try await accounts(clientID: clientID).first { IdentifierCase.folded($0.homeAccountID) == IdentifierCase.folded(homeAccountID) }
    }

    /// The account a single-account app is signed in as: of the accounts with an ID token for `clientID` (signed in
    /// with this client and not signed out of it), the one whose ID token was issued last (its `iat` claim: the latest
    /// sign-in or refresh); nil when there is none.
    ///
    /// The cache keeps no "current account" of its own. MSAL's single-account apps keep one account per client,
    /// and the most recently issued ID token is the account last signed in, or refreshed, with this client. An account
    /// whose refresh token is gone is still current: ``token(for:refresh:)`` then throws
    /// ``TokenClientError/Code/interactionRequired`` naming it, so that the app can pre-fill the sign-in.
    public func currentAccount(clientID: String) async throws -> AccountInfo? {
        let accounts = try accountInfos(listedFor: nil, claimsOf: clientID).filter { !$0.claims.all.isEmpty }
        return accounts.enumerated().max { lhs, rhs in
            let left = lhs.element.claims.issuedAt ?? .min, right = rhs.element.claims.issuedAt ?? .min
            // Among equals the first listed wins (the list is ordered by home account id, so the choice is stable).
            return left != right ? left < right : lhs.offset > rhs.offset
        }?.element
    }

    private static func accountInfo(_ summary: AccountSummary, clientID: String?, reader: CacheReader) throws -> AccountInfo? {
        guard let profile = summary.profiles.first?.entity else { return nil }
        var idToken: IDToken? = nil
        if let clientID {
            let key = IDToken.Key(homeAccountID: profile.homeAccountID, environment: profile.environment, clientID: clientID, realm: profile.realm)
            do { idToken = try reader.get(key)?.entity } catch let error as TokenCacheError where error.code == .corruptRecord {
                idToken = nil  // a damaged ID token only costs the claims; the account is listed
            }
        } else {
            // Any client's: the claims describe the user, whichever client redeemed them.
            idToken = try reader.list(IDToken.self, filter: RecordFilter(homeAccountID: profile.homeAccountID)).records
                .first { IdentifierCase.folded($0.entity.realm) == IdentifierCase.folded(profile.realm) }?.entity
        }
        return AccountInfo(account: profile, idToken: idToken)
    }

    // MARK: Writes (on the write thread)

    /// Stores what a token response yields (after an interactive sign-in, a device-code flow, a client-credentials
    /// grant): access token, refresh token, ID token, account and app metadata, in one durable transaction.
    @discardableResult
    public func ingest(_ response: TokenResponse, context: TokenRequestContext) async throws -> IngestResult {
        let result = try await committing { store in try store.ingest(response, context: context) }
        reportWritten(homeAccountID: result.homeAccountID, clientID: context.clientID)
        return result
    }

    /// Runs a write of this client's on the write thread. The change feed accounts for its commit there, in commit
    /// order, and counts the write as in flight (so that a poll does not take its commit for another process's) until
    /// the caller reports it with `feed.ownWrite`; a write that throws is ended here.
    func committing<R: Sendable>(_ body: @escaping @Sendable (TokenStore) throws -> R) async throws -> R {
        try await Self.committing(store: store, writer: writer, feed: feed, body)
    }

    /// ``committing(_:)`` with the parts it needs, for work that may outlive the client (a pending store).
    static func committing<R: Sendable>(
        store: TokenStore, writer: WriteThread, feed: ChangeFeed, _ body: @escaping @Sendable (TokenStore) throws -> R
    ) async throws -> R {
        feed.beginOwnWrite()
        do {
            return try await writer.run { [store, feed] in
                let before = store.lastCommitID
                let result = try body(store)
                feed.accountOwnCommit(before: before, after: store.lastCommitID)
                return result
            }
        } catch {
            feed.ownWriteFailed()
            throw error
        }
    }

    /// ``committing(_:)`` for a write listeners are not told about (a lease, a renewal): ended at once.
    func committingUnreported<R: Sendable>(_ body: @escaping @Sendable (TokenStore) throws -> R) async throws -> R {
        let result = try await committing(body)
        feed.ownWrite([])
        return result
    }

    /// Tells listeners that tokens of an account were written for a client (and that the account is new, if it is),
    /// ending the write ``committing(_:)`` began.
    func reportWritten(homeAccountID: String, clientID: String) {
        Self.reportWritten(homeAccountID: homeAccountID, clientID: clientID, store: store, feed: feed)
    }

    /// ``reportWritten(homeAccountID:clientID:)`` with the parts it needs, for work that may outlive the client.
    static func reportWritten(homeAccountID: String, clientID: String, store: TokenStore, feed: ChangeFeed) {
        let (listening, known) = feed.knownAccount(homeAccountID)
        guard listening else {
            feed.ownWrite([])
            return
        }
        let reference = AccountReference(homeAccountID: homeAccountID, username: try? username(of: homeAccountID, in: store))
        var changes: [CacheChange] = []
        if !known && !homeAccountID.isEmpty { changes.append(.accountAdded(reference)) }
        changes.append(.tokensWritten(reference, clientID: clientID))
        feed.ownWrite(changes) { accounts in
            if !homeAccountID.isEmpty { accounts[IdentifierCase.folded(homeAccountID)] = reference }
        }
    }

    /// The username an Account record of the account names, if any.
    func username(of homeAccountID: String) throws -> String? {
        try Self.username(of: homeAccountID, in: store)
    }

    static func username(of homeAccountID: String, in store: TokenStore) throws -> String? {
        try store.list(Account.self, filter: RecordFilter(homeAccountID: homeAccountID)).records.lazy.compactMap(\.entity.username).first
    }

    /// The store's changes as they happen: this client's writes at once, other processes' within
    /// `changePollInterval`. Each call is a new listener; the stream ends when the consumer stops iterating (or its
    /// task is cancelled), and with the last listener the polling stops.
    public func changes() -> AsyncStream<CacheChange> {
        feed.subscribe(client: self)
    }

    /// Stores what a token response yields; the time received is the clock's now (see ``ingest(_:context:)``).
    @discardableResult
    public func ingest(
        _ response: TokenResponse, clientID: String, authority: Authority, scopes: [String], grantType: String? = "authorization_code"
    ) async throws -> IngestResult {
        let context = TokenRequestContext(clientID: clientID, authority: authority, requestedScopes: scopes, grantType: grantType, now: clock.now())
        return try await ingest(response, context: context)
    }

    /// Signs an account out of one client (its tokens for the client; the account record when no client has
    /// tokens left), or everywhere when `clientID` is nil.
    @discardableResult
    public func signOut(homeAccountID: String, clientID: String?) async throws -> RemovalSummary {
        let username = feed.knownAccount(homeAccountID).listening ? try? username(of: homeAccountID) : nil
        let summary = try await committing { store in try store.removeAccount(homeAccountID: homeAccountID, clientID: clientID) }
        let reference = AccountReference(homeAccountID: homeAccountID, username: username)
        let gone = feed.knownAccount(homeAccountID).listening
            ? (try? store.list(Account.self, filter: RecordFilter(homeAccountID: homeAccountID)).records.isEmpty) ?? false : false
        feed.ownWrite([gone ? .accountRemoved(reference) : .tokensRemoved(reference, clientID: clientID)]) { accounts in
            if gone { accounts[IdentifierCase.folded(homeAccountID)] = nil }
        }
        return summary
    }

    /// Returns once no refresh started by this client is running, background ones included: for an app about to
    /// exit, and for tests.
    public func waitForRefreshes() async {
        await refreshes.waitUntilIdle()
    }

    /// Returns once no redeemed response waits to be stored again (after its store failed for a while): for an app
    /// about to exit that wants its rotations kept, and for tests. At most the lease's duration twice.
    public func waitForPendingStores() async {
        await pendingStores.waitUntilIdle()
    }
}
