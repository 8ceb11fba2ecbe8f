import Synchronization
import TokenCache

/// Redeemed responses whose store failed for a while (the store unreachable, its deadline passed, writers colliding
/// past their bound), and the retries that store them late.
///
/// A refresh-token redemption rotates the token at the token endpoint: once it succeeded, the redeemed token is dead
/// there, and the response holds the only live one. When the transaction that stores it fails for a reason that can
/// pass, the caller gets that error at once (within the store's deadline, as before), and the prepared response is
/// handed here: a task of its own stores it again with backoff (50 ms doubling to 1 s) in the same transaction as
/// before (the refresh lease released, the rotation stored by compare-and-swap against the redeemed token, so a late
/// store keeps whichever rotation is stored). It ends when the response is stored, when the store says it is no
/// longer wanted (the account signed out meanwhile), when the failure is one that does not pass, or at its bound: the
/// lease's lapse plus one lease duration, the longest another process that took the lease over and had the redeemed
/// token refused waits for this rotation (``TokenClient``'s `awaitReplacement`).
///
/// While a store is pending, this process does not redeem the redeemed token again: a refresh that finds that token
/// (same record, revision and secret) asks the pending store to try at once and takes its outcome
/// (``awaitAttempt()``). The lease is not released on its own meanwhile (only with the rotation), so another process
/// waits for it, or for its lapse.
///
/// A pending store holds what it needs (the store, the write thread, the change feed), not the client: a client
/// released or gone keeps those alive until the retries end, at their bound at the latest.
final class PendingStores: Sendable {
    /// What one attempt to store found.
    enum Outcome: Sendable {
        /// Stored (the rotation, or the rest of the response when another rotation was there first).
        case stored
        /// Not stored, and never will be: the account was signed out since the token was redeemed.
        case notWanted
        /// This attempt failed for a reason that may pass; the retries go on.
        case failed(any Error)
        /// The retries ended without storing it: the bound passed, or a failure that does not pass.
        case gaveUp(any Error)
    }

    /// One response waiting to be stored.
    final class Entry: Sendable {
        let id: UInt64
        /// The refresh token that was redeemed, as it was read: while this revision of it is stored, this process does
        /// not offer it to the token endpoint again.
        let redeemed: StoredEntity<RefreshToken>
        fileprivate let wakeUp = WakeUp()
        /// Who waits for the next attempt's outcome; the last outcome once the retries ended.
        private let waiting = Mutex<(waiters: [CheckedContinuation<Outcome, Never>], last: Outcome?)>(([], nil))

        fileprivate init(id: UInt64, redeemed: StoredEntity<RefreshToken>) {
            self.id = id
            self.redeemed = redeemed
        }

        /// Whether `token` is the one this entry redeemed.
        func redeemed(_ token: StoredEntity<RefreshToken>) -> Bool {
            token.entity.key == redeemed.entity.key && token.revision == redeemed.revision && token.entity.secret == redeemed.entity.secret
        }

        /// The outcome of the next attempt, started at once: one attempt's time at most (the store's deadline),
        /// plus that of an attempt under way.
        func awaitAttempt() async -> Outcome {
            await withCheckedContinuation { continuation in
                let last = waiting.withLock { waiting in
                    if waiting.last == nil { waiting.waiters.append(continuation) }
                    return waiting.last
                }
                if let last { continuation.resume(returning: last) } else { wakeUp.wake() }
            }
        }

        /// Tells the waiters an attempt's outcome; `last` when the retries end with it.
        fileprivate func tell(_ outcome: Outcome, last: Bool = false) {
            let waiters = waiting.withLock { waiting in
                defer { waiting.waiters = [] }
                if last { waiting.last = outcome }
                return waiting.waiters
            }
            for waiter in waiters { waiter.resume(returning: outcome) }
        }
    }

    private struct State {
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    /// The first pause between attempts, and the longest.
    let firstPause: Duration
    let longestPause: Duration

    init(firstPause: Duration = .milliseconds(50), longestPause: Duration = .seconds(1)) {
        self.firstPause = firstPause
        self.longestPause = longestPause
    }

    /// Whether a failure to store may pass: the store unreachable or past its deadline, writers colliding past the
    /// bound of their retries, another process holding the store's writer lock too long, an I/O failure (a shared
    /// store's connection lost in a way the driver does not name as such reads as one). Not: a malformed response
    /// (nothing was prepared), a full disk, a damaged store, a wrong key, a read-only store; nor a store that found the
    /// account signed out, which is no failure (``Outcome/notWanted``).
    static func isRetryable(_ error: any Error) -> Bool {
        guard let error = error as? TokenCacheError else { return false }
        return [.storeUnavailable, .conflict, .lockTimeout, .ioFailure].contains(error.code)
    }

    /// The pending store for the redeemed token `token`, if there is one.
    func entry(redeeming token: StoredEntity<RefreshToken>) -> Entry? {
        state.withLock { state in state.entries.values.first { $0.redeemed(token) } }
    }

    /// How many stores are pending (for tests).
    var count: Int { state.withLock { $0.entries.count } }

    /// Starts retrying: `attempt` is run again after each pause (or at once when a waiter asks) until it stores,
    /// finds the response unwanted, fails for good, or `deadline` passes. `ended` is called once with the last
    /// outcome, before the entry goes.
    func retry(
        redeemed: StoredEntity<RefreshToken>, until deadline: ContinuousClock.Instant, lastFailure: any Error,
        attempt: @escaping @Sendable () async -> Outcome, ended: @escaping @Sendable (Outcome) -> Void
    ) {
        let entry = state.withLock { state in
            state.nextID += 1
            let entry = Entry(id: state.nextID, redeemed: redeemed)
            state.entries[entry.id] = entry
            return entry
        }
        let (firstPause, longestPause) = (firstPause, longestPause)
        Task.detached { [self] in
            var pause = firstPause
            var outcome = Outcome.failed(lastFailure)
            while true {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if case .failed(let error) = outcome, remaining <= .zero {
                    outcome = .gaveUp(error)
                    break
                }
                await entry.wakeUp.sleep(for: min(pause, remaining))
                pause = min(pause * 2, longestPause)
                outcome = await attempt()
                guard case .failed = outcome else { break }
                entry.tell(outcome)
            }
            ended(outcome)
            entry.tell(outcome, last: true)
            state.withLock { _ = $0.entries.removeValue(forKey: entry.id) }
        }
    }

    /// Returns once no store is pending (for tests).
    func waitUntilIdle() async {
        while count > 0 { try? await Task.sleep(for: .milliseconds(5)) }
    }
}

/// A pause that a waiter may end early.
private final class WakeUp: Sendable {
    private struct State {
        var woken = false
        var sleeper: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    /// Ends the pause under way, or the next one at once.
    func wake() {
        let sleeper = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let sleeper = state.sleeper else {
                state.woken = true
                return nil
            }
            state.sleeper = nil
            return sleeper
        }
        sleeper?.resume()
    }

    /// Returns after `duration`, or when woken, whichever is first.
    func sleep(for duration: Duration) async {
        let timer = Task {
            guard (try? await Task.sleep(for: duration)) != nil else { return }
            self.wake()
        }
        defer { timer.cancel() }
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if state.woken {
                    state.woken = false
                    return true
                }
                state.sleeper = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}
