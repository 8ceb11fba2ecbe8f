import Synchronization
import TokenCacheClient

/// What `GET /stats` reports: this host's `/token` requests by where their answer came from, its redemptions and its
/// errors by kind.
final class HostStatistics: Sendable {
    private struct Counts {
        var requests = 0
        var sources: [TokenSource: Int] = [:]
        var redemptions = 0
        var signIns = 0
        var signOuts = 0
        var errors: [String: Int] = [:]
    }

    private let counts = Mutex(Counts())

    func request() { counts.withLock { $0.requests += 1 } }
    func answered(from source: TokenSource) { counts.withLock { $0.sources[source, default: 0] += 1 } }
    func redemption() { counts.withLock { $0.redemptions += 1 } }
    func signIn() { counts.withLock { $0.signIns += 1 } }
    func signOut() { counts.withLock { $0.signOuts += 1 } }
    func failed(_ kind: String) { counts.withLock { $0.errors[kind, default: 0] += 1 } }

    /// The `/stats` body, with the client's late stores (redeemed responses whose store failed for a while).
    func json(name: String, client: ClientStatistics) -> [String: Any] {
        let counts = counts.withLock { $0 }
        return [
            "name": name, "requests": counts.requests, "l1": counts.sources[.l1] ?? 0, "store": counts.sources[.store] ?? 0,
            "refreshed": counts.sources[.refreshed] ?? 0, "joined": counts.sources[.joined] ?? 0, "redemptions": counts.redemptions,
            "sign_ins": counts.signIns, "sign_outs": counts.signOuts, "errors": counts.errors,
            "late_stores": ["retried": client.storesRetried, "stored": client.storedLate, "given_up": client.lateStoresGivenUp],
        ]
    }
}
