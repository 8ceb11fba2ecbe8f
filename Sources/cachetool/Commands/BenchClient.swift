import Dispatch
import Foundation
import Synchronization
import TokenCache
@_spi(Benchmarking) import TokenCacheBenchmarking
import TokenCacheClient

/// The figures of `cachetool bench` for the async client: what `token(for:refresh:)` costs an app on a hit, with
/// and without its in-process L1, and on a refresh, beside the store's own lookups.
enum BenchClient {
    /// The population's query time, for every call: the client's clock does not move during a run.
    struct FixedClock: WallClock {
        let time: Int64
        func now() -> Int64 { time }
    }

    /// What the client figures measured.
    struct Figures {
        var hit: LatencySummary
        var answerCacheHit: LatencySummary
        var refresh: LatencySummary
    }

    /// Measures the client on `cache`: `hits` as requests (each answered from the store, then again from the L1),
    /// and `refreshes` forced refreshes whose closure returns a prepared response at once.
    static func measure(_ cache: TokenStore, hits: [SilentLookupQuery], refreshes: Int, population: SyntheticPopulation, salt: Int) throws -> Figures {
        let requests = try hits.map { query in
            TokenRequest(
                clientID: query.clientID, homeAccountID: query.homeAccountID, authority: try Authority("https://\(query.environment)/\(query.realm)"),
                scopes: query.scopes, tokenType: query.tokenType, keyID: query.keyID
            )
        }
        let responses = try (0..<refreshes).map { number in
            let (json, context) = population.tokenResponse(number: number &+ salt)
            let request = TokenRequest(
                clientID: context.clientID, homeAccountID: population.tokenResponseHomeAccountID(number: number &+ salt),
                authority: context.authority, scopes: context.requestedScopes, forceRefresh: true
            )
            return (request, try TokenResponse(json: json))
        }
        let clock = FixedClock(time: SyntheticPopulation.queryNow)
        return try blocking {
            let withoutL1 = TokenClient(store: cache, clock: clock, answerCacheCapacity: 0)
            let hit = try await timeHits(withoutL1, requests)
            // A repeat: each request asked once (answered by a lookup, which the L1 keeps), then at once again, timed.
            let withL1 = TokenClient(store: cache, clock: clock, answerCacheCapacity: requests.count)
            let answerCacheHit = try await timeHits(withL1, requests, repeating: true)
            var times: [UInt64] = []
            for (request, response) in responses {
                let start = MonotonicClock.nanoseconds()
                let result = try await withoutL1.token(for: request) { _, _ in response }
                times.append(MonotonicClock.nanoseconds() - start)
                guard result.source == .refresh else { throw BenchFailure("a forced refresh was answered from the cache: the figure would be wrong") }
            }
            return Figures(hit: hit, answerCacheHit: answerCacheHit, refresh: LatencySummary(nanoseconds: times))
        }
    }

    private static let mustNotRefresh: TokenClient.Refresh = { _, _ in
        throw BenchFailure("a benchmark hit needed a refresh: the figures would be wrong")
    }

    /// Times one hit per request; `repeating`: each asked first, untimed, and the timed call must be the L1's.
    private static func timeHits(_ client: TokenClient, _ requests: [TokenRequest], repeating: Bool = false) async throws -> LatencySummary {
        var times = [UInt64](repeating: 0, count: requests.count)
        for (index, request) in requests.enumerated() {
            if repeating { _ = try await client.token(for: request, refresh: mustNotRefresh) }
            let answeredBefore = client.statistics.answerCacheHits
            let start = MonotonicClock.nanoseconds()
            let result = try await client.token(for: request, refresh: mustNotRefresh)
            times[index] = MonotonicClock.nanoseconds() - start
            guard result.source == .cache else { throw BenchFailure("a benchmark hit was not answered from the cache") }
            let fromL1 = client.statistics.answerCacheHits > answeredBefore
            guard fromL1 == repeating else {
                throw BenchFailure("a benchmark hit was \(fromL1 ? "" : "not ")answered by the L1: the figure would be wrong")
            }
        }
        return LatencySummary(nanoseconds: times)
    }

    /// Runs `body` on Swift concurrency's pool and waits for it here (`bench` is a synchronous command).
    private static func blocking<R: Sendable>(_ body: @escaping @Sendable () async throws -> R) throws -> R {
        let done = DispatchSemaphore(value: 0)
        let outcome = ResultBox<R>()
        Task {
            do {
                let value = try await body()
                outcome.value.withLock { $0 = value }
            } catch {
                outcome.result.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        if case .failure(let error)? = outcome.result.withLock({ $0 }) { throw error }
        return outcome.value.withLock { $0 }!
    }
}

/// Hands a result from a task to the thread waiting for it.
private final class ResultBox<R: Sendable>: Sendable {
    let value = Mutex<R?>(nil)
    let result = Mutex<Result<Void, any Error>?>(nil)
}
