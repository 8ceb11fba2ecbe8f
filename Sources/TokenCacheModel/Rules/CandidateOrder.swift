/// One access token that matches a lookup, reduced to what ``CandidateOrder`` compares.
package struct AccessTokenCandidate: Sendable, Hashable {
    /// `cached_at`, Unix seconds.
    package var cachedAt: Int64
    /// `expires_on`, Unix seconds.
    package var expiresOn: Int64
    /// Bytes unique per record (e.g. its storage key), compared last so that no two records tie.
    package var tiebreak: [UInt8]

    package init(cachedAt: Int64, expiresOn: Int64, tiebreak: [UInt8]) {
        self.cachedAt = cachedAt
        self.expiresOn = expiresOn
        self.tiebreak = tiebreak
    }
}

/// Deterministic preference among several matching access tokens (possible after importing foreign caches):
/// the most recently cached wins, ties by later expires_on, remaining ties by the given tiebreak bytes (e.g.
/// storage key), ascending.
///
/// The engine's own writes cannot produce two matches (``IntersectDelete`` removes the older token), but an
/// imported Python or Go cache can. The SDKs disagree on what to do then (first in map order, throw, delete all;
/// Docs/Semantics.md, "Differences from the MSAL SDKs"); this engine takes the newest, deterministically. The
/// order is a strict total order on distinct candidates, so the winner does not depend on the order in which the
/// store visits records.
package enum CandidateOrder {
    /// Whether candidate `a` is preferred over candidate `b`: later `cachedAt`, then later `expiresOn`, then the
    /// bytewise smaller `tiebreak`. Irreflexive: a candidate is never preferred over an equal one.
    ///
    /// - Parameters:
    ///   - a: `cached_at` of the first candidate.
    ///   - aExp: `expires_on` of the first candidate.
    ///   - aKey: tiebreak bytes of the first candidate.
    ///   - bCached: `cached_at` of the second candidate.
    ///   - bExp: `expires_on` of the second candidate.
    ///   - bKey: tiebreak bytes of the second candidate.
    package static func prefers(
        cachedAt a: Int64, expiresOn aExp: Int64, tiebreak aKey: some Collection<UInt8>,
        over bCached: Int64, _ bExp: Int64, _ bKey: some Collection<UInt8>
    ) -> Bool {
        if a != bCached { return a > bCached }
        if aExp != bExp { return aExp > bExp }
        return aKey.lexicographicallyPrecedes(bKey)
    }

    /// Whether `a` is preferred over `b` (see ``prefers(cachedAt:expiresOn:tiebreak:over:_:_:)``).
    package static func prefers(_ a: AccessTokenCandidate, over b: AccessTokenCandidate) -> Bool {
        prefers(cachedAt: a.cachedAt, expiresOn: a.expiresOn, tiebreak: a.tiebreak, over: b.cachedAt, b.expiresOn, b.tiebreak)
    }

    /// The index of the preferred candidate, or `nil` when there is none. Among fully equal candidates (same
    /// tiebreak bytes, which distinct records never share) the first wins.
    package static func best(_ candidates: [AccessTokenCandidate]) -> Int? {
        var best: Int? = nil
        for index in candidates.indices {
            if let current = best, !prefers(candidates[index], over: candidates[current]) { continue }
            best = index
        }
        return best
    }
}
