import Foundation
import TokenCache
import TokenCacheClient

/// The clock the population's lookups ask at (``Workload/now``), for a TokenClient.
struct WorkloadClock: WallClock {
    func now() -> Int64 { Workload.now }
}

extension SizeRun {
    /// How long another host's L1 serves what a write changed: host A (a TokenClient on a store opened for it) signs a
    /// user out; host B (a TokenClient on a store opened for it, with its own change listener), whose L1 holds that
    /// user's answer, asks again and again from the moment the sign-out returned until it is refused. Each trial
    /// signs out a user of its own (run last: the users are gone afterwards). Bounded: a trial gives up after 30 s.
    func invalidationDelay(_ queries: [SilentLookupQuery], trials: Int) throws -> InvalidationDelay {
        var seen = Set<String>()
        let users = queries.filter { seen.insert($0.homeAccountID).inserted }.prefix(trials)
        let writer = TokenClient(store: try TokenStore.open(try configuration(primary)), clock: WorkloadClock())
        let reader = TokenClient(store: try TokenStore.open(try configuration(primary)), clock: WorkloadClock())
        let requests = try users.map { query in
            TokenRequest(
                clientID: query.clientID, homeAccountID: query.homeAccountID, authority: try Authority("https://\(query.environment)/\(query.realm)"),
                scopes: query.scopes
            )
        }
        let (delays, servedAfterReturn) = try blocking { () async throws -> ([UInt64], Int) in
            let refuse: TokenClient.Refresh = { _, _ in throw BenchError("a refresh was asked for") }
            let bound: UInt64 = 30_000_000_000
            var delays: [UInt64] = [], servedAfterReturn = 0
            for request in requests {
                // The reader's L1 answers once its listener is up and it asked once.
                let warm = Clock.now()
                while true {
                    let hits = reader.statistics.answerCacheHits
                    _ = try await reader.token(for: request, refresh: refuse)
                    if reader.statistics.answerCacheHits > hits { break }
                    guard Clock.now() - warm < bound else { throw BenchError("the reader's L1 never answered") }
                    try await Task.sleep(for: .milliseconds(1))
                }
                _ = try await writer.signOut(homeAccountID: request.homeAccountID, clientID: nil)
                let returned = Clock.now()
                var first = true
                while true {
                    do {
                        _ = try await reader.token(for: request, refresh: refuse)
                        if first { servedAfterReturn += 1 }
                    } catch {
                        delays.append(Clock.now() - returned)
                        break
                    }
                    first = false
                    guard Clock.now() - returned < bound else { throw BenchError("the reader kept serving a signed-out user") }
                    await Task.yield()
                }
            }
            return (delays, servedAfterReturn)
        }
        return InvalidationDelay(trials: delays.count, latency: Latency(delays), max_ns: delays.max() ?? 0, served_after_return: servedAfterReturn)
    }
}
