import Synchronization
package import TokenCacheStorage
internal import TokenCacheRecords

/// Writes prepared outside any transaction and applied in one call (``WritePlan``): the async path of the storage
/// seam, for a backend across a network, where a transaction held open across round trips would hold every other
/// writer up. A flow names what it reads (a ``ReadPlan``), the backend fetches it in one call, the flow's own code
/// decides on it (through a ``PlannedWrite``, so it decides exactly as in a transaction), and the backend applies the
/// changes in one call if nothing they were derived from changed in between; otherwise the flow fetches and decides
/// again. A local backend runs both calls synchronously (LMDB: a read transaction, then one write transaction).
extension TokenStore {
    /// How often a planned write fetches and decides again after other writers changed what it read, before it runs as
    /// a transaction instead.
    package static let plannedWriteAttempts = 8

    /// Ingests `response` as ``ingest(_:context:)`` does, through a write plan: one fetch and one apply, however many
    /// records the response yields (a second fetch when the expiry sweep removes a token whose bucket it did not
    /// fetch whole). Same records, revisions and result as the transaction.
    /// - Throws: As ``ingest(_:context:)``.
    @discardableResult
    package func ingestApplyingPlan(_ response: TokenResponse, context: TokenRequestContext) async throws -> IngestResult {
        let plan = try IngestPlan.mapped(response: response, context: context, for: store)
        return try await applyingPlannedWrite(now: Self.currentTime(), reading: { plan.readPlan(sweepingFrom: $0) }) { writer in
            try writer.ingest(plan, now: context.now)
        }
    }

    /// Stores a prepared refresh as ``CacheWriter/storeRefresh(_:)`` does (the rotation by compare-and-swap, then the
    /// rest of the response), through a write plan: one fetch and one apply when the redeemed token is still the one
    /// stored; another fetch when the rotation must look for its token under another owner.
    /// - Returns: As ``CacheWriter/storeRefresh(_:)``: false, with nothing written, when the account was signed out.
    package func storeRefreshApplyingPlan(_ prepared: PreparedRefresh) async throws -> Bool {
        let index = store.keyring.index
        let tokens = [prepared.redeemed] + (prepared.rotated.map { [$0] } ?? [])
        return try await applyingPlannedWrite(now: Self.currentTime(), reading: { cursor in
            var plan = prepared.plan.readPlan(sweepingFrom: cursor)
            for token in tokens { plan.add(.refreshTokens, key: RefreshToken.storageKey(for: token.key, index: index)) }
            return plan
        }) { writer in
            try writer.storeRefresh(prepared)
        }
    }

    /// Runs `body` as a planned write on whatever it reads, its changes applied at once: `plan` names what it is
    /// expected to read (each prefix it reads beyond that costs one more fetch), and a body that scans or counts beyond
    /// it runs in a write transaction instead. For a backend across a network, where every read inside a transaction
    /// would be a round trip.
    /// - Parameter freeingSpace: The body only removes records (``TokenStore/removing(_:)``): at the store's size cap
    ///   it may use the room kept in reserve.
    package func writeApplyingPlan<R>(reading plan: ReadPlan, freeingSpace: Bool = false, _ body: (CacheWriter) throws -> R) async throws -> R {
        try await applyingPlannedWrite(now: Self.currentTime(), freeingSpace: freeingSpace, reading: { _ in plan }, body)
    }

    /// Runs `body` as a planned write, stamping records with `now`: `readPlan(sweepCursor)` names what it reads,
    /// given where the expiry sweep resumes. A body that reads a prefix its plan did not name (a bucket the sweep
    /// emptied) has the plan widened by it and runs again on a new fetch; one that reads further outside (an
    /// eviction's random sample, which no plan can name) runs in a write transaction instead, and so does one that
    /// other writers beat ``plannedWriteAttempts`` times in a row (the transaction waits its turn instead).
    func applyingPlannedWrite<R>(
        now: Int64, freeingSpace: Bool = false, reading readPlan: ([UInt8]) -> ReadPlan, _ body: (CacheWriter) throws -> R
    ) async throws -> R {
        try store.checkWritable()
        let directory = store.directory
        var widened: [(KeySpace, [UInt8])] = []
        var attempts = 0
        while attempts < Self.plannedWriteAttempts {
            try Task.checkCancellation()
            let cursor = store.sweepCursor.withLock { $0.key }
            var plan = readPlan(cursor)
            for (space, prefix) in widened { plan.add(space, prefix: prefix) }
            // On a shared store a record the flow creates starts above the store's revision floor, fetched with the plan.
            plan.readsRevisionFloor = store.revisionMarks != nil
            let transaction: PlannedWrite
            do {
                transaction = try PlannedWrite(try await store.backend.fetch(plan))
            } catch { throw TokenCacheError.wrapKeepingCallerErrors(error, directory: directory) }
            let writer = CacheWriter(store: store, transaction: transaction, now: now)
            writer.sweepStart = cursor
            let result: Result<R, any Error>
            do {
                try store.checkHeaderUnchanged(in: transaction)
                result = .success(try store.writingRecords { try body(writer) })
            } catch { result = .failure(error) }
            // A read outside the plan, even one the flow caught (a `try?`), may have changed what it decided.
            switch transaction.missed {
            case .prefix(let space, let prefix)? where widened.count < Self.plannedWriteAttempts:
                widened.append((space, prefix))
                continue
            case _?:
                return try store.write(now: now, freeingSpace: freeingSpace, body)
            case nil:
                break
            }
            let value: R
            do {
                value = try result.get()
                // A seal that failed poisons the write, as in a backend's transaction, even if the flow caught it.
                if let failure = transaction.failure { throw failure }
            } catch { throw TokenCacheError.wrapKeepingCallerErrors(error, directory: directory) }
            let outcome: WritePlanOutcome
            do { outcome = try await store.backend.apply(transaction.plan(freeingSpace: freeingSpace)) } catch {
                throw TokenCacheError.wrapKeepingCallerErrors(error, directory: directory)
            }
            attempts += 1
            guard case .applied(let commit) = outcome else { continue }
            if let cursor = writer.sweepCursor { store.publishSweepCursor(cursor, committedIn: commit) }
            return value
        }
        return try store.write(now: now, freeingSpace: freeingSpace, body)
    }
}
