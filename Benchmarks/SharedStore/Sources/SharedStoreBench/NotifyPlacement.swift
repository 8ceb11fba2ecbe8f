import Foundation
import PostgresNIO
import TokenCache
@_spi(Benchmarking) import TokenCacheBenchmarking

/// Where a write's change notification may be sent, each placement measured by the durable write throughput of
/// concurrent writers (FORMAT.md §2.2 gives the staleness each placement allows):
/// - in the write's transaction: the store's triggers (which bump the buckets and notify), as shipped;
/// - after the commit, by the writer, on a connection of its own (as an extra statement of the writer's
///   connection would be: one more round trip, in a transaction of its own), with the server's default durability
///   and with `synchronous_commit = off` (the notification's transaction carries no data);
/// - none: the triggers disabled, nothing bumped or sent, the ceiling.
/// PostgreSQL lets one notifying transaction commit at a time (a notifying transaction holds a lock on the
/// notification queue from before its commit record until it is flushed), which is the cost measured.
enum NotifyPlacement: String, CaseIterable {
    case inTransaction = "in the write's transaction (the store's trigger)"
    case afterCommit = "after commit, a statement of its own"
    case afterCommitAsync = "after commit, a statement of its own, `synchronous_commit = off`"
    case none = "none (the ceiling)"
}

extension SizeRun {
    func notifyPlacement(_ writes: [Workload.Write], rounds: Int = 2) throws -> NotifyPlacementResult {
        let writers = options.hosts
        let seconds = options.throughputSeconds
        let store = try TokenStore.open(try configuration(primary))
        let channel = "token_cache_\(ourSchema)"
        let notifiers = try (0..<writers).map { _ in try Connection(primary) }
        let asyncNotifiers = try (0..<writers).map { _ in try Connection(primary) }
        for connection in asyncNotifiers { try connection.query("SET synchronous_commit = off") }
        let table = "\"\(ourSchema)\".records"
        defer { _ = try? figures.admin.query("ALTER TABLE \(table) ENABLE TRIGGER USER") }
        var totals: [NotifyPlacement: (timings: [UInt64], errors: Int, runs: Int)] = [:]
        for _ in 0..<rounds {
            for placement in NotifyPlacement.allCases {
                try figures.admin.query("ALTER TABLE \(table) \(placement == .inTransaction ? "ENABLE" : "DISABLE") TRIGGER USER")
                let (timings, errors) = runCallers(writers, seconds: seconds) { caller, i in
                    let write = writes[(caller + writers * i) % writes.count]
                    _ = try blocking { try await store.ingestThroughWritePlan(TokenResponse(json: write.json), context: write.context) }
                    var binds = PostgresBindings()
                    binds.append(channel)
                    switch placement {
                    case .afterCommit: try notifiers[caller].query("SELECT pg_notify($1, '')", binds)
                    case .afterCommitAsync: try asyncNotifiers[caller].query("SELECT pg_notify($1, '')", binds)
                    case .inTransaction, .none: break
                    }
                }
                totals[placement, default: ([], 0, 0)].timings += timings
                totals[placement]!.errors += errors
                totals[placement]!.runs += 1
            }
        }
        return NotifyPlacementResult(
            writers: writers, seconds: seconds, rounds: rounds,
            placements: NotifyPlacement.allCases.map { placement in
                let total = totals[placement] ?? ([], 0, 0)
                return NotifyPlacementResult.Placement(
                    placement: placement.rawValue, writes: total.timings.count,
                    writes_per_second: Double(total.timings.count) / (seconds * Double(max(total.runs, 1))), latency: Latency(total.timings),
                    errors: total.errors
                )
            }
        )
    }
}
