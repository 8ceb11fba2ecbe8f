import Synchronization
import TokenCacheClient

/// Where one `GET /token` got its answer, which ``TokenResult/source`` tells only in part (`cache` or `refresh`):
/// whether the in-process L1 answered, and whether this request's own refresh redeemed the refresh token or it
/// got the result of a refresh another request (or another host) ran.
///
/// A request binds a fresh trace to ``current`` around its `token(for:)` call. The client reports its L1 hits
/// through a swift-metrics counter, inline on the caller's task, and ``TraceMetrics`` notes them here; the refresh
/// closure notes a redemption, and runs in the refresh's own task, which inherits the trace of the request that
/// started it (and only that one: a request that joined it keeps its own, unnoted).
final class TokenSourceTrace: Sendable {
    @TaskLocal static var current: TokenSourceTrace?

    private struct Notes {
        var l1Hit = false
        var redeemed = false
    }

    private let notes = Mutex(Notes())

    func noteL1Hit() { notes.withLock { $0.l1Hit = true } }
    func noteRedemption() { notes.withLock { $0.redeemed = true } }

    /// The source `/token` reports for `result`.
    func source(of result: TokenResult) -> TokenSource {
        let notes = notes.withLock { $0 }
        switch result.source {
        case .cache: return notes.l1Hit ? .l1 : .store
        // The farm's hosts ask for users' tokens only; an acquisition (an app's own token) would count as a redemption.
        case .refresh, .acquired: return notes.redeemed ? .refreshed : .joined
        }
    }
}

/// Where a host's answer came from.
enum TokenSource: String, Sendable {
    /// The client's in-process L1, with no read of the store.
    case l1
    /// A usable token read from the store (another host's refresh may have put it there).
    case store
    /// This request's refresh redeemed the refresh token.
    case refreshed
    /// A refresh another request of this host started, or that another host ran while this one waited for its
    /// refresh lease.
    case joined
}
