import Foundation
import Logging
import Metrics
import Synchronization
public import TokenCache

extension TokenClient {
    /// What the caller's refresh closure gets: the refresh token to redeem (`grant_type=refresh_token`) and the
    /// scopes to ask for. It returns the token endpoint's response (``TokenResponse/init(json:)`` parses one).
    public typealias Refresh = @Sendable (_ refreshToken: Secret, _ scopes: [String]) async throws -> TokenResponse

    /// An access token for `request`, redeeming refresh tokens with the client's own ``refresh`` closure (given to
    /// the initializer): `try await client.token(for: request).value` is the token. See ``token(for:refresh:)``.
    ///
    /// - Throws: what ``token(for:refresh:)`` throws; ``TokenClientError/Code/refreshNotConfigured`` when a refresh is
    ///   needed and the client was made without a closure.
    public func token(for request: TokenRequest) async throws -> TokenResult {
        try await token(for: request, refresh: refresh ?? Self.noRefresh)
    }

    private static let noRefresh: Refresh = { _, _ in
        throw TokenClientError(
            .refreshNotConfigured, "the client has no refresh closure: pass one to its initializer, or call token(for:refresh:)"
        )
    }

    /// An access token for `request`: from the cache when a usable one is stored, else by redeeming the refresh
    /// token through `refresh` (the library does no HTTP) and storing the response.
    ///
    /// The flow, and what makes it safe to call from many tasks and processes at once:
    /// 1. **Lookup.** A stored token with at least 300 s left is returned. When its `refresh_on` has passed, it is
    ///    still returned, and one refresh starts in the background (as MSAL's proactive refresh does).
    /// 2. **Single flight.** Callers in this process asking for the same account, client, authority and scopes
    ///    while a refresh runs wait for that refresh instead of starting their own: one call of `refresh` however
    ///    many callers. The refresh runs in a task of its own: a cancelled caller stops waiting at once
    ///    (`CancellationError`) and does not cancel it for the others.
    /// 3. **Redeem.** `refresh` gets the refresh token the store says to redeem (the family's first when the client
    ///    may use it), read again as the refresh starts, so a token another process rotated meanwhile is the one
    ///    redeemed; and only under a refresh lease (FORMAT.md §5.7), renewed while `refresh` runs, so that processes
    ///    sharing the store redeem it once: one that finds another's lease waits for its result instead.
    /// 4. **Store.** One durable transaction replaces the redeemed refresh token with the rotated one, only if it
    ///    is still the one stored (compare-and-swap), and stores the rest of the response. If another process
    ///    rotated it meanwhile, its token is kept and the rest is stored; if the account was signed out meanwhile,
    ///    nothing is stored and the call throws ``TokenClientError/Code/interactionRequired``. If the transaction fails
    ///    for a reason that may pass (the store unreachable or past its deadline, writers colliding past their bound, a
    ///    lock held too long, an I/O failure), the call throws that error, and the response is stored again in the background until it
    ///    is stored, unwanted, or the lease's lapse plus one lease duration has passed; meanwhile no request of this
    ///    client redeems the token that response rotated (``waitForPendingStores()``).
    ///
    /// - Throws: ``TokenClientError`` `.interactionRequired` (with the account hint) when the cache holds no
    ///   refresh token for the request; whatever `refresh` throws, unchanged, to every caller waiting on it;
    ///   ``TokenCacheError`` for a malformed response (nothing stored) or a storage failure.
    public func token(for request: TokenRequest, refresh: @escaping Refresh) async throws -> TokenResult {
        try await obtain(request, refresh, nil)
    }

    /// What the caller's acquire closure gets: the scopes to ask for. It calls the token endpoint with a grant that
    /// needs no refresh token — the app's client credentials (`grant_type=client_credentials`), or the on-behalf-of
    /// exchange of the caller's assertion (`urn:ietf:params:oauth:grant-type:jwt-bearer`, `requested_token_use=
    /// on_behalf_of`), with the extra parameters its request's ``TokenRequest/extendedCacheKey`` was made from — and
    /// returns the token endpoint's response.
    public typealias Acquire = @Sendable (_ scopes: [String]) async throws -> TokenResponse

    /// An access token for a request the app obtains without the user — its own token
    /// (``TokenRequest/app(clientID:authority:scopes:extendedCacheKey:forceRefresh:)``, client credentials), or a web
    /// API's token for its caller (``TokenRequest/onBehalfOf(_:clientID:authority:scopes:forceRefresh:)``, the
    /// on-behalf-of exchange): from the cache when a usable one is stored, else through `acquire`, its response stored
    /// under the request's tenant, partition and extended cache key. This is MSAL's order for both: client credentials,
    /// and MSAL .NET's `AcquireTokenOnBehalfOf` (the cache, then the exchange of the assertion; a forced request
    /// exchanges at once). A refresh token stored in an on-behalf-of partition is not redeemed here: ``token(for:)``
    /// redeems it, for a long-running process that no longer has the caller's assertion.
    ///
    /// An acquisition runs as a refresh does: one per process for equal requests (callers asking meanwhile wait for
    /// it); one across the processes and hosts sharing the store, under a lease on acquiring that token (FORMAT.md
    /// §5.7) renewed while `acquire` runs (the others wait for what it stores, and take over when its holder fails or
    /// stops); its answer kept in the L1; and started in the background when a returned token's `refresh_on` has passed
    /// (app tokens of long lifetimes carry one).
    ///
    /// - Throws: ``TokenCacheError`` `.invalidArgument` for a request with an account (a user's tokens come from a
    ///   sign-in, not from `acquire`) or whose authority names no tenant (`common`, `organizations`: tokens without an
    ///   account are stored under the tenant that issued them, and nothing else names it); what `acquire` throws,
    ///   unchanged, to every caller waiting on it (the lease released, nothing stored); ``TokenClientError``
    ///   `.unusableResponse` when what it returned does not answer the request; storage failures.
    public func token(for request: TokenRequest, acquire: @escaping Acquire) async throws -> TokenResult {
        guard request.homeAccountID.isEmpty || request.onBehalfOf != nil else {
            throw TokenCacheError(
                .invalidArgument,
                "a request with a home account id is a user's: its tokens come from a sign-in and its refresh token, not from acquire (make the request with TokenRequest.app or TokenRequest.onBehalfOf)"
            )
        }
        guard !request.authority.isTenantless else {
            throw TokenCacheError(
                .invalidArgument,
                "an app or on-behalf-of request must name its tenant (for a caller, its token's tid): the authority's tenant is \(request.authority.tenant), which names none"
            )
        }
        return try await obtain(request, nil, acquire)
    }

    /// The flow behind every `token(for:)`: through `refresh` (a stored refresh token redeemed) when `acquire` is nil,
    /// else through `acquire` (a new grant).
    private func obtain(_ request: TokenRequest, _ refresh: Refresh?, _ acquire: Acquire?) async throws -> TokenResult {
        if !request.forceRefresh {
            let now = clock.now()
            // Counted by the L1 itself: an answer from it touches no shared counter.
            if let kept = answers.answer(request, now: now, isCurrent: store.isCurrent) {
                metrics.l1Hits.increment()
                return kept
            }
            counters.tokenRequests.increment()
            let answer = try store.silentLookup(request.query(now: now))
            switch answer.outcome {
            case .hit:
                if let result = TokenResult(hit: answer, source: .cache) {
                    counters.cacheHits.increment()
                    metrics.hits.increment()
                    if result.refreshRecommended {
                        refreshInBackground(request, refresh, acquire)
                    } else {
                        answers.keep(result, for: request, stamp: answer.stamp)
                    }
                    return result
                }
            case .interactionRequired:
                guard acquire == nil else { break }  // nothing to redeem: acquire
                metrics.interactionRequired.increment()
                log.log(.info, "interaction required: no refresh token for the request", log.metadata(request))
                throw try interactionRequired(request, answer)
            case .refresh:
                break
            }
        } else {
            counters.tokenRequests.increment()
        }
        do {
            let (result, role) = try await refreshes.run(request.flightKey(acquiring: acquire != nil)) { [self] in
                try await refreshNow(request, refresh, acquire)
            }
            if role == .joined {
                counters.joinedRefreshes.increment()
                metrics.joinedRefreshes.increment()
            }
            (result.source == .acquired ? metrics.acquired : metrics.refreshed).increment()
            return result
        } catch let error as TokenClientError where error.code == .interactionRequired {
            metrics.interactionRequired.increment()
            // A closure that found its refresh token refused names no account: name the one asked for.
            guard error.accountHint == nil, !request.homeAccountID.isEmpty else { throw error }
            let username = try? self.username(of: request.homeAccountID)
            throw TokenClientError(
                .interactionRequired, error.message, accountHint: TokenClientError.AccountHint(homeAccountID: request.homeAccountID, username: username),
                refusesRefreshToken: error.refusesRefreshToken
            )
        } catch {
            metrics.failed.increment()
            throw error
        }
    }

    /// Starts a refresh for `request` unless one is running; its errors are counted, not thrown (the caller already
    /// has a usable token).
    private func refreshInBackground(_ request: TokenRequest, _ refresh: Refresh?, _ acquire: Acquire?) {
        let started = refreshes.startIfIdle(request.flightKey(acquiring: acquire != nil)) { [self] in
            do { return try await refreshNow(request, refresh, acquire) } catch {
                log.log(.warning, "background refresh failed: \(String(reflecting: type(of: error)))", log.metadata(request))
                throw error
            }
        }
        if started { counters.backgroundRefreshes.increment() }
    }

    /// One refresh, as one process's part of a refresh that may be going on in several: wait for another process's
    /// lease on the refresh token (and use what it stores), or take the lease, redeem and store.
    private func refreshNow(_ request: TokenRequest, _ refresh: Refresh?, _ acquire: Acquire?) async throws -> TokenResult {
        let began = clock.now()
        let started = ContinuousClock.now
        defer { metrics.refreshDuration.recordNanoseconds(Self.nanoseconds(ContinuousClock.now - started)) }
        log.log(.debug, "refresh started", log.metadata(request))
        var waited = false
        var waitStarted: ContinuousClock.Instant? = nil
        defer { if let waitStarted { metrics.leaseWaitDuration.recordNanoseconds(Self.nanoseconds(ContinuousClock.now - waitStarted)) } }
        var pause = Duration.milliseconds(2)
        while true {
            let answer = try store.silentLookup(request.query(now: clock.now()))
            // What another refresh stored (one in another process this one waited for, or one that ended just before
            // this began) answers the request. A forced refresh takes only a token stored since it began.
            if let result = usable(answer, request, began: began, waited: waited, source: acquire == nil ? .refresh : .acquired) { return result }
            let step: Step
            if let acquire {
                step = try await acquisitionStep(request, acquire, began: began, waited: waited)
            } else if let redeemed = try answer.refreshToken, let refresh {
                step = try await refreshStep(request, redeemed, answer, refresh)
            } else {
                throw try interactionRequired(request, answer)
            }
            let until: Int64
            switch step {
            case .done(let result): return result
            case .lookAgain: continue
            case .wait(let lapse): until = lapse
            }
            // Another process is redeeming this token (or acquiring this request's): poll until its result appears or
            // its lease lapses, backing off to 50 ms.
            if !waited {
                counters.leaseWaits.increment()
                metrics.leaseWaits.increment()
                waitStarted = ContinuousClock.now
                log.log(.debug, "waiting for another process's refresh (or acquisition) for the same request", log.metadata(request))
            }
            waited = true
            let remaining = Duration.milliseconds(max(1, until - Self.systemMilliseconds()))
            try await Task.sleep(for: min(pause, remaining))
            pause = min(pause * 2, .milliseconds(50))
        }
    }

    /// What one pass of ``refreshNow(_:_:_:)`` came to.
    private enum Step {
        /// The answer.
        case done(TokenResult)
        /// Something moved (a lease lost, a token rotated or stored): look up again.
        case lookAgain
        /// Another process holds the lease until this time (Unix milliseconds): wait for its result.
        case wait(until: Int64)
    }

    /// The answer `answer` gives `request` in a refresh or acquisition that began at `began` (clock seconds), if it is
    /// one: what another refresh stored (one in another process this one waited for, or one that ended just before this
    /// began). A forced request takes only a token stored since it began, after a wait.
    private func usable(_ answer: SilentLookupResult, _ request: TokenRequest, began: Int64, waited: Bool, source: TokenResult.Source) -> TokenResult? {
        guard answer.outcome == .hit, !answer.refreshRecommended, let token = answer.accessToken?.entity,
            !request.forceRefresh || (waited && token.cachedAt >= began)
        else { return nil }
        return TokenResult(hit: answer, source: waited ? source : .cache)
    }

    /// One pass at redeeming `redeemed`: under this process's lease, or by waiting for another's.
    private func refreshStep(
        _ request: TokenRequest, _ redeemed: StoredEntity<RefreshToken>, _ answer: SilentLookupResult, _ refresh: @escaping Refresh
    ) async throws -> Step {
        // This process redeemed this very token already and holds the response, whose store failed: never offer
        // the token again (the token endpoint rotated it); have that store tried now and take what it found.
        if let pending = pendingStores.entry(redeeming: redeemed) {
            log.log(.debug, "the refresh token's response waits to be stored: trying that store instead", log.metadata(request))
            switch await pending.awaitAttempt() {
            case .stored, .notWanted: return .lookAgain  // what is stored now answers
            case .failed(let error), .gaveUp(let error): throw error
            }
        }
        // While another process holds the lease, wait with reads only (a lookup and the lease record: microseconds,
        // no writer lock); try to take it once it is gone or has lapsed. A token the token endpoint refused is
        // never offered to it again (reuse detection would revoke the whole grant): the user signs in.
        switch try store.read({ try $0.refreshLeaseState(on: redeemed, now: Self.systemMilliseconds()) }) {
        case .refused: throw try interactionRequired(request, answer)
        case .held(let until): return .wait(until: until)
        case .free: break
        }
        let leaseDuration = refreshLeaseDuration
        // Taking a lease is a commit of this client's own: nothing to report, but not another process's either.
        let attempt = try await committingUnreported { store in
            try store.takeRefreshLease(on: redeemed, duration: leaseDuration, now: Self.systemMilliseconds())
        }
        switch attempt {
        case .taken(let lease):
            let confirmed = LeaseConfirmation()
            if let result = try await redeem(request, redeemed, lease: lease, confirmed: confirmed, refresh) {
                return .done(result)
            }
            return .lookAgain  // the lease was lost, or the token replaced, during the redemption: see what is stored now
        case .superseded: return .lookAgain
        case .refused: throw try interactionRequired(request, answer)
        case .held(let until): return .wait(until: until)
        }
    }

    /// One pass at acquiring the request's token through `acquire`: under this process's lease on acquiring it, or by
    /// waiting for another's (FORMAT.md §5.7), so that a farm's hosts that find the same app token gone call the token
    /// endpoint once.
    private func acquisitionStep(_ request: TokenRequest, _ acquire: @escaping Acquire, began: Int64, waited: Bool) async throws -> Step {
        let token = request.acquiredTokenKey
        let leaseDuration = refreshLeaseDuration
        if let until = try store.read({ try $0.acquisitionLeaseExpiry(for: token, now: Self.systemMilliseconds()) }) { return .wait(until: until) }
        let attempt = try await committingUnreported { store in
            try store.takeAcquisitionLease(for: token, duration: leaseDuration, now: Self.systemMilliseconds())
        }
        switch attempt {
        case .held(let until): return .wait(until: until)
        case .taken(let lease):
            // Another holder may have stored the token and released its lease between this pass's lookup and the lease
            // read: a lookup now, after the lease was taken, sees what it stored (a forced request takes it only after a
            // wait, as above).
            let answer = try store.silentLookup(request.query(now: clock.now()))
            if let result = usable(answer, request, began: began, waited: waited, source: .acquired) {
                _ = try? await committingUnreported { store in try store.releaseAcquisitionLease(lease) }
                return .done(result)
            }
            guard let result = try await acquireUnderLease(request, lease, acquire) else { return .lookAgain }
            return .done(result)
        }
    }

    /// Calls `acquire` under `lease` (renewed while it runs) and stores the response, releasing the lease in the same
    /// transaction (or on its own if acquiring or storing fails); nil when the lease was lost meanwhile (the closure is
    /// cancelled, and what another holder stored answers).
    private func acquireUnderLease(_ request: TokenRequest, _ lease: AcquisitionLease, _ acquire: @escaping Acquire) async throws -> TokenResult? {
        counters.acquisitions.increment()
        let context: TokenRequestContext
        do {
            let response: TokenResponse
            do {
                let duration = refreshLeaseDuration
                response = try await whileRenewing(LeaseConfirmation(), { [self] in
                    try await committingUnreported { store in
                        try store.renewAcquisitionLease(lease, duration: duration, now: Self.systemMilliseconds()) != nil
                    }
                }, { [scopes = request.scopes] in try await acquire(scopes) })
            } catch is LeaseLost {
                counters.failedAcquisitions.increment()
                metrics.acquisitionFailures.increment()
                log.log(.warning, "acquisition lease lost while acquiring: the acquisition was cancelled", log.metadata(request))
                return nil
            }
            context = TokenRequestContext(
                clientID: request.clientID, authority: request.authority, requestedScopes: request.scopes, grantType: request.acquisitionGrantType,
                now: clock.now(), extendedCacheKey: request.extendedCacheKey, onBehalfOf: request.onBehalfOf
            )
            let ingested = try await committing { store in try store.ingest(response, context: context, releasing: lease) }
            reportWritten(homeAccountID: ingested.homeAccountID, clientID: request.clientID)
        } catch {
            counters.failedAcquisitions.increment()
            metrics.acquisitionFailures.increment()
            // The type only: a closure's error may quote what the token endpoint said.
            log.log(.warning, "acquisition failed: \(String(reflecting: type(of: error)))", log.metadata(request))
            _ = try? await committingUnreported { store in try store.releaseAcquisitionLease(lease) }
            throw error
        }
        metrics.acquisitionSuccesses.increment()
        log.log(.debug, "acquisition stored", log.metadata(request))
        return try storedAnswer(request, now: context.now, source: .acquired)
    }

    /// What the store answers `request` with just after this client stored a response for it, kept in the L1.
    private func storedAnswer(_ request: TokenRequest, now: Int64, source: TokenResult.Source) throws -> TokenResult {
        let after = try store.silentLookup(request.query(now: now))
        guard after.outcome == .hit, var result = TokenResult(hit: after, source: .cache) else {
            throw TokenClientError(
                .unusableResponse,
                "the token endpoint's response was stored, but its access token does not answer the request (its scopes do not cover the requested ones, or it expires within 300 s)"
            )
        }
        if !result.refreshRecommended { answers.keep(result, for: request, stamp: after.stamp) }
        result.source = source
        return result
    }

    /// Thrown by the lease's renewal when the lease was lost: it ends the redemption.
    private struct LeaseLost: Error {}

    /// When the store last confirmed this process's lease (taken or renewed), by this process's clock: the lease lapses
    /// a lease's duration later at the latest (the store timed it when it wrote it, before it answered).
    private final class LeaseConfirmation: Sendable {
        private let instant = Mutex(ContinuousClock.now)
        func confirm() { instant.withLock { $0 = ContinuousClock.now } }
        var last: ContinuousClock.Instant { instant.withLock { $0 } }
    }

    /// Redeems `redeemed` under `lease` and stores the response, releasing the lease in the same transaction (or on
    /// its own if redeeming or storing fails). The lease is renewed every third of its duration while the closure
    /// runs, so that a slow token endpoint does not let another process redeem the same token meanwhile; nil when the
    /// lease was lost all the same (this process stalled past it), after cancelling the closure, or when the token
    /// endpoint refused the token but a newer one is stored now (``awaitReplacement(of:followsLapsedLease:)``).
    ///
    /// When the redemption succeeded but its store failed for a reason that may pass (``PendingStores``), the caller
    /// gets that failure as before, and the response is stored again in the background with the lease still held,
    /// rather than dropped: the token endpoint has rotated the redeemed token, and the response holds the live one.
    private func redeem(
        _ request: TokenRequest, _ redeemedRecord: StoredEntity<RefreshToken>, lease: RefreshLease, confirmed: LeaseConfirmation,
        _ refresh: @escaping Refresh
    ) async throws -> TokenResult? {
        counters.refreshes.increment()
        let redeemed = redeemedRecord.entity
        let response: TokenResponse
        let stored: Bool
        let context: TokenRequestContext
        var storedLater = false
        do {
            do {
                let (duration, secret, scopes) = (refreshLeaseDuration, redeemed.secret, request.scopes)
                response = try await whileRenewing(confirmed, { [self] in
                    try await committingUnreported { store in
                        try store.renewRefreshLease(lease, duration: duration, now: Self.systemMilliseconds()) != nil
                    }
                }, { try await refresh(secret, scopes) })
            } catch is LeaseLost {
                counters.failedRefreshes.increment()
                metrics.refreshFailures.increment()
                log.log(.warning, "refresh lease lost while redeeming: the redemption was cancelled", log.metadata(request))
                return nil
            } catch let refusal as TokenClientError where refusal.refusesRefreshToken {
                // The token endpoint refused the token. Recorded, so that no process offers it again; then, if a newer
                // one is stored (a holder that redeemed it first and lost its lease stores its rotation), use that.
                _ = try? await committingUnreported { store in
                    try store.recordRefusedRedemption(lease, of: redeemedRecord, now: Self.systemMilliseconds())
                }
                if try await awaitReplacement(of: redeemedRecord, followsLapsedLease: lease.followsLapsedLease) {
                    counters.failedRefreshes.increment()
                    metrics.refreshFailures.increment()
                    log.log(.info, "refresh token refused, but a newer one was stored meanwhile: using it", log.metadata(request))
                    return nil
                }
                throw refusal  // counted and the lease left as recorded below
            }
            context = TokenRequestContext(
                clientID: request.clientID, authority: request.authority, requestedScopes: request.scopes, grantType: "refresh_token",
                now: clock.now(), extendedCacheKey: request.extendedCacheKey, onBehalfOf: request.onBehalfOf
            )
            // Derived and keyed here, before the write: under the writer lock only the compare-and-swap and the puts.
            let prepared = try store.prepareRefresh(response, redeemed: redeemed, context: context)
            let storing: @Sendable (TokenStore) throws -> Bool = { store in
                try store.write { writer in
                    // Not released if lost at the last moment (another process may then have redeemed the same
                    // token): the compare-and-swap of the rotation keeps whichever rotation is stored.
                    _ = try writer.releaseRefreshLease(lease)
                    return try writer.storeRefresh(prepared)
                }
            }
            do {
                stored = try await committing(storing)
            } catch let error where PendingStores.isRetryable(error) {
                // Lapsed at the latest a lease's duration after its last confirmation; a process that takes it over
                // then and has the token refused waits another lease's duration for this rotation.
                storeLater(request, redeemedRecord, storing, until: confirmed.last + refreshLeaseDuration * 2, after: error)
                storedLater = true
                throw error
            }
            if stored {
                reportWritten(homeAccountID: redeemed.homeAccountID, clientID: request.clientID)
            } else {
                feed.ownWrite([])
            }
        } catch {
            counters.failedRefreshes.increment()
            metrics.refreshFailures.increment()
            // The type only: a closure's error may quote what the token endpoint said.
            log.log(.warning, "refresh failed: \(String(reflecting: type(of: error)))", log.metadata(request))
            // A response stored later keeps the lease until it is stored with it: released now, another process could
            // take it and redeem the token this one's response rotated.
            if !storedLater { _ = try? await committingUnreported { store in try store.releaseRefreshLease(lease) } }
            throw error
        }
        metrics.refreshSuccesses.increment()
        log.log(.debug, "refresh stored", log.metadata(request))
        guard stored else {
            throw TokenClientError(
                .interactionRequired, "the account was signed out while its refresh token was being redeemed; nothing was stored",
                accountHint: TokenClientError.AccountHint(homeAccountID: request.homeAccountID, username: nil)
            )
        }
        return try storedAnswer(request, now: context.now, source: .refresh)
    }

    /// What `work` returns (a token endpoint's response), with a lease renewed beside it every third of its duration
    /// by `renew` (whether the lease was still held); `LeaseLost` (`work` cancelled) when a renewal finds it gone.
    private func whileRenewing(
        _ confirmed: LeaseConfirmation, _ renew: @escaping @Sendable () async throws -> Bool,
        _ work: @escaping @Sendable () async throws -> TokenResponse
    ) async throws -> TokenResponse {
        let duration = refreshLeaseDuration
        return try await withThrowingTaskGroup(of: TokenResponse?.self) { group in
            group.addTask { try await work() }
            group.addTask {
                while true {
                    try await Task.sleep(for: duration / 3)
                    guard try await renew() else { throw LeaseLost() }
                    confirmed.confirm()
                }
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let response = first else { throw LeaseLost() }
            return response
        }
    }

    /// Hands a redeemed response whose store failed with `failure` (one that may pass) to ``PendingStores``: stored
    /// again with backoff until stored, unwanted, or `deadline`. What it holds is the store's, not the client's, so
    /// that it goes on if the client is released. Nothing about the token is logged.
    private func storeLater(
        _ request: TokenRequest, _ redeemed: StoredEntity<RefreshToken>, _ storing: @escaping @Sendable (TokenStore) throws -> Bool,
        until deadline: ContinuousClock.Instant, after failure: any Error
    ) {
        counters.storesRetried.increment()
        metrics.storesRetried.increment()
        let (store, writer, feed, counters, metrics, log) = (store, writer, feed, counters, metrics, log)
        let metadata = log.metadata(request)
        let (homeAccountID, clientID) = (redeemed.entity.homeAccountID, request.clientID)
        log.log(.warning, "a redeemed response could not be stored (\(Self.codeName(failure))): storing it again in the background", metadata)
        pendingStores.retry(
            redeemed: redeemed, until: deadline, lastFailure: failure,
            attempt: {
                do {
                    let stored = try await Self.committing(store: store, writer: writer, feed: feed, storing)
                    if stored {
                        Self.reportWritten(homeAccountID: homeAccountID, clientID: clientID, store: store, feed: feed)
                    } else {
                        feed.ownWrite([])
                    }
                    return stored ? .stored : .notWanted
                } catch {
                    return PendingStores.isRetryable(error) ? .failed(error) : .gaveUp(error)
                }
            },
            ended: { outcome in
                switch outcome {
                case .stored:
                    counters.storedLate.increment()
                    metrics.storedLate.increment()
                    log.log(.info, "a redeemed response was stored late", metadata)
                case .notWanted:
                    metrics.lateStoresNotWanted.increment()
                    log.log(.info, "a redeemed response was not stored late: the account was signed out meanwhile", metadata)
                case .gaveUp(let error), .failed(let error):
                    counters.lateStoresGivenUp.increment()
                    metrics.lateStoresGivenUp.increment()
                    log.log(.error, "a redeemed response could not be stored (\(Self.codeName(error))): its rotation is lost", metadata)
                }
            }
        )
    }

    /// The error's code when it is the library's, else its type: never its message, which may quote a server.
    private static func codeName(_ error: any Error) -> String {
        (error as? TokenCacheError)?.code.name ?? String(reflecting: type(of: error))
    }

    /// Whether the refresh token `refused` (whose redemption the token endpoint just refused) has been replaced in the
    /// store by another: at once, or — when this process took the lease over from a holder that stopped before it
    /// released it, and so may have redeemed the token first and may yet store its rotation — within a lease's
    /// duration, polled with reads only.
    private func awaitReplacement(
        of refused: StoredEntity<RefreshToken>, followsLapsedLease: Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + (followsLapsedLease ? refreshLeaseDuration : .zero)
        var pause = Duration.milliseconds(5)
        while true {
            // Removed (a sign-out) is no replacement; a new revision under the key is.
            guard let current = try store.get(refused.entity.key) else { return false }
            if current.revision != refused.revision { return true }
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(100))
        }
    }

    /// A duration in whole nanoseconds, for a timer.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds &* 1_000_000_000 &+ duration.components.attoseconds / 1_000_000_000
    }

    /// The system clock in Unix milliseconds: leases coordinate processes in real time, whatever clock judges
    /// token expiry.
    static func systemMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

    /// The error for a request the cache cannot answer without the user, naming the account when it is known: the cache
    /// holds no refresh token for it, or holds one the token endpoint refused (not offered again).
    private func interactionRequired(_ request: TokenRequest, _ answer: SilentLookupResult) throws -> TokenClientError {
        let username = try answer.account?.entity.username
        let hint = request.homeAccountID.isEmpty ? nil : TokenClientError.AccountHint(homeAccountID: request.homeAccountID, username: username)
        let reason = try answer.refreshToken == nil
            ? "the cache holds no refresh token for this request"
            : "the token endpoint refused the cached refresh token (another process tried it)"
        return TokenClientError(.interactionRequired, reason + ": the user must sign in", accountHint: hint)
    }
}
