/// A write prepared outside any transaction: the puts and deletes a flow decided on, and the records it decided from.
///
/// A flow fetches what it needs (a ``ReadPlan``), runs its own code over those records through a ``PlannedWrite``
/// (which records the writes instead of making them), and hands the result to the backend, which applies it in one
/// transaction, and only if every range still holds exactly what was fetched (keys and sealed bytes) and every
/// count is unchanged: optimistic concurrency, checked by the backend under its writer lock. A backend across a
/// network applies a plan in one round trip (``WritePlanApplying``); a local one in one write transaction
/// (``RecordBackend/applySynchronously(_:)``). On `.conflict` nothing was written, and the flow fetches and decides
/// again.
package struct WritePlan: Sendable {
    /// One change, in the order the flow made it.
    package enum Mutation: Sendable, Equatable {
        case put(KeySpace, key: [UInt8], value: [UInt8])
        case delete(KeySpace, key: [UInt8])
    }

    /// What the flow fetched: the plan's records, as they were.
    package let expected: FetchedRecords
    /// The ranges of the plan (by index) and the counts the flow read, which the backend checks again before it
    /// writes: each must still hold exactly what was fetched.
    package let checkedRanges: Set<Int>
    package let checkedCounts: Set<KeySpace>
    package let mutations: [Mutation]
    /// The changes only remove records (``RecordBackend/write(freeingSpace:_:)``).
    package let freeingSpace: Bool

    package init(
        expected: FetchedRecords, checking ranges: Set<Int>, counts: Set<KeySpace>, mutations: [Mutation], freeingSpace: Bool = false
    ) {
        self.expected = expected
        checkedRanges = ranges
        checkedCounts = counts
        self.mutations = mutations
        self.freeingSpace = freeingSpace
    }
}

/// What applying a ``WritePlan`` did.
package enum WritePlanOutcome: Sendable, Equatable {
    /// Every change was made, in the commit `commitID` (what ``RecordBackend/lastCommitID`` then says).
    case applied(commitID: Int)
    /// A range no longer held what was fetched (another writer committed in between): nothing was written.
    case conflict
}

/// A backend that applies a ``WritePlan`` in one call without blocking the caller's thread while it waits (a backend
/// across a network). Without it, a plan is applied synchronously in one write transaction.
package protocol WritePlanApplying: AnyObject, Sendable {
    func apply(_ plan: WritePlan) async throws -> WritePlanOutcome
}

extension RecordBackend {
    /// Applies `plan` in one write transaction, if the store still holds what it was derived from.
    package func applySynchronously(_ plan: WritePlan) throws -> WritePlanOutcome {
        do {
            return try write(freeingSpace: plan.freeingSpace) { transaction in
                // Only what the flow read: the rest cannot have changed its decision.
                let current = try transaction.collect(plan.expected.plan, ranges: plan.checkedRanges, counts: plan.checkedCounts)
                guard current.holdsTheSameRecords(as: plan.expected, inRanges: plan.checkedRanges, counts: plan.checkedCounts) else {
                    throw WritePlanConflict()
                }
                try transaction.apply(plan.mutations)
                return .applied(commitID: transaction.snapshotID)
            }
        } catch is WritePlanConflict {
            return .conflict
        }
    }

    /// Applies `plan` in one call: the backend's own when it has one, else one write transaction.
    package func apply(_ plan: WritePlan) async throws -> WritePlanOutcome {
        if let applying = self as? any WritePlanApplying { return try await applying.apply(plan) }
        return try applySynchronously(plan)
    }
}

/// Thrown inside the write transaction to roll it back when a plan's expectations fail.
private struct WritePlanConflict: Error {}

extension RecordWriting {
    /// Makes `mutations`, in order.
    package func apply(_ mutations: [WritePlan.Mutation]) throws {
        for mutation in mutations {
            switch mutation {
            case .put(let space, let key, let value): try value.withUnsafeBytes { try put(in: space, key: key, value: $0) }
            case .delete(let space, let key): try delete(in: space, key: key)
            }
        }
    }
}
