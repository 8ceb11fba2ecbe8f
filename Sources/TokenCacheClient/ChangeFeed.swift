import Synchronization
import TokenCache

/// Who hears about changes, and what the client knows of the store to tell them.
///
/// This process's writes through the client are reported as they commit. Other processes' writes are found by a
/// poll of the store's last commit id (a read of the map's meta page, tens of nanoseconds) every `interval`, while
/// someone listens: a commit this client did not account for makes it list the accounts again and report the
/// difference, and ``CacheChange/changedElsewhere``. LMDB has no notification of its own; a poll of one word is
/// what a commit costs nothing for and an idle listener almost nothing.
final class ChangeFeed: Sendable {
    private struct State {
        var listeners: [UInt64: AsyncStream<CacheChange>.Continuation] = [:]
        var nextID: UInt64 = 0
        /// The accounts as last listed or written here, by lowercased home account id.
        var accounts: [String: AccountReference]? = nil
        /// The last commit whose changes are reported (or were before anyone listened).
        var accountedCommit = 0
        var rekeyReported = false
        /// This client's writes begun and not yet accounted for: while there are any, a poll waits (their commits
        /// would look like another process's).
        var ownWritesInFlight = 0
        /// Writes of this client's begun so far: a poll that sees it move while it reads starts over.
        var ownWritesBegun = 0
        var poller: Task<Void, Never>? = nil
    }

    private let state = Mutex(State())
    let interval: Duration

    init(interval: Duration) { self.interval = interval }

    /// A new listener's stream; polling runs while there is at least one.
    func subscribe(client: TokenClient) -> AsyncStream<CacheChange> {
        let (stream, continuation) = AsyncStream<CacheChange>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let store = client.store
        let baseline = try? Self.accountReferences(store)
        let commit = store.lastCommitID
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.listeners[state.nextID] = continuation
            if state.listeners.count == 1 {
                state.accounts = baseline
                state.accountedCommit = commit
                state.poller = Task.detached { [weak client, interval, self] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: interval)
                        guard let client else {
                            // The client is gone: nothing will be reported again.
                            self.finishAll()
                            return
                        }
                        client.feed.poll(client.store)
                    }
                }
            }
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }

    private func unsubscribe(_ id: UInt64) {
        let poller = state.withLock { state -> Task<Void, Never>? in
            state.listeners[id] = nil
            guard state.listeners.isEmpty else { return nil }
            defer { state.poller = nil }
            return state.poller
        }
        poller?.cancel()
    }

    /// How many listen (tests).
    var listenerCount: Int { state.withLock { $0.listeners.count } }

    /// Marks the start of a write of this client's; ``ownWrite(_:accounts:)`` or ``ownWriteFailed()`` ends it.
    func beginOwnWrite() {
        state.withLock { state in
            state.ownWritesInFlight += 1
            state.ownWritesBegun += 1
        }
    }

    /// Ends a write of this client's that failed (nothing to report; a commit it made anyway is the poll's).
    func ownWriteFailed() { state.withLock { $0.ownWritesInFlight -= 1 } }

    /// Accounts for a commit of this client's, made as the commit after `before` if `after` says so. Called on the
    /// write thread right after the commit, so in commit order.
    func accountOwnCommit(before: Int, after: Int) {
        state.withLock { state in
            // Only this write committed since what was accounted for: it is accounted for now. Otherwise the poll
            // reports what else happened.
            if state.accountedCommit == before && after == before + 1 { state.accountedCommit = after }
        }
    }

    /// Ends a write of this client's and reports what it changed.
    func ownWrite(_ changes: [CacheChange], accounts update: (inout [String: AccountReference]) -> Void = { _ in }) {
        state.withLock { state in
            state.ownWritesInFlight -= 1
            guard !state.listeners.isEmpty else { return }
            if state.accounts != nil { update(&state.accounts!) }
            for listener in state.listeners.values { for change in changes { listener.yield(change) } }
        }
    }

    /// Ends every stream: the client is gone.
    func finishAll() {
        let listeners = state.withLock { state -> [AsyncStream<CacheChange>.Continuation] in
            defer { state.listeners = [:] }
            return Array(state.listeners.values)
        }
        for listener in listeners { listener.finish() }
    }

    /// The accounts as the feed last knew them, nil when nobody listens.
    func knownAccount(_ homeAccountID: String) -> (listening: Bool, known: Bool) {
        state.withLock { state in
            (!state.listeners.isEmpty, state.accounts?[IdentifierCase.folded(homeAccountID)] != nil)
        }
    }

    /// One poll: reports what other writers changed since the last accounted commit.
    func poll(_ store: TokenStore) {
        let commit = store.lastCommitID
        let begun = state.withLock { state -> Int? in
            !state.listeners.isEmpty && state.ownWritesInFlight == 0 && state.accountedCommit != commit ? state.ownWritesBegun : nil
        }
        guard let begun else { return }
        let listed = try? Self.accountReferences(store)
        let rekeyed = (try? store.headerChangedSinceOpen()) ?? false
        state.withLock { state in
            // A write of this client's began meanwhile: what was read may mix its commit in. The next poll looks again.
            guard state.ownWritesBegun == begun else { return }
            var changes: [CacheChange] = []
            if let listed, let known = state.accounts {
                for (key, account) in listed.sorted(by: { $0.key < $1.key }) where known[key] == nil { changes.append(.accountAdded(account)) }
                for (key, account) in known.sorted(by: { $0.key < $1.key }) where listed[key] == nil { changes.append(.accountRemoved(account)) }
            }
            changes.append(.changedElsewhere)
            if rekeyed && !state.rekeyReported {
                state.rekeyReported = true
                changes.append(.storeRekeyed)
            }
            if let listed { state.accounts = listed }
            state.accountedCommit = commit
            for listener in state.listeners.values { for change in changes { listener.yield(change) } }
        }
    }

    /// Every account of the store, by lowercased home account id.
    static func accountReferences(_ store: TokenStore) throws -> [String: AccountReference] {
        var references: [String: AccountReference] = [:]
        for summary in try store.accounts().accounts {
            references[IdentifierCase.folded(summary.homeAccountID)] = AccountReference(homeAccountID: summary.homeAccountID, username: summary.username)
        }
        return references
    }
}
