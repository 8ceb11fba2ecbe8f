/// Which access tokens a store at its cap evicts, chosen from a random sample of its tokens.
///
/// A store with a cap (`TokenStore.setAccessTokenCap(_:progress:)`, in TokenCacheOperations) removes access tokens when
/// a write takes it over the cap, as many as it exceeds it by: expired tokens first (they can never be used again),
/// then the least recently cached. The store keeps no index by time (an ordered index would put write times in
/// plaintext keys, FORMAT.md §8), so the tokens are chosen as Redis chooses keys to evict: from a sample of a few
/// tokens read at a random point of the key space, whose keys are uniformly distributed by the blind index. The oldest
/// of 16 random tokens is older than 94% of the store on average; the cost per eviction is a fixed number of summary
/// reads, whatever the store's size.
///
/// Only access tokens are ever evicted. A refresh token is the one credential that needs the user to sign in again
/// when lost, so no cap removes one; sign-out and `purge-expired` are the ways refresh tokens leave a store.
package enum EvictionChoice {
    /// A sampled token: its storage key and the two times the choice looks at (from its summary).
    package struct Candidate: Equatable {
        package var key: [UInt8]
        package var cachedAt: Int64
        package var expiresOn: Int64

        package init(key: [UInt8], cachedAt: Int64, expiresOn: Int64) {
            self.key = key
            self.cachedAt = cachedAt
            self.expiresOn = expiresOn
        }
    }

    /// Tokens read per sample.
    package static let sampleSize = 16

    /// The keys to evict from `sample` when `needed` tokens must go: expired tokens before valid ones, each group
    /// oldest by `cached_at` first (ties: storage order). At most `needed`, and of valid tokens at most a quarter of
    /// the sample, so that each eviction stays among the oldest of the store; at least one.
    package static func victims(from sample: [Candidate], needed: Int, now: Int64) -> [[UInt8]] {
        guard needed > 0, !sample.isEmpty else { return [] }
        let expired = sample.filter { $0.expiresOn <= now }.count
        let take = min(needed, max(expired, 1, sample.count / 4))
        let ranked = sample.enumerated().sorted { lhs, rhs in
            let (left, right) = (rank(lhs.element, now: now), rank(rhs.element, now: now))
            return left != right ? left < right : lhs.offset < rhs.offset
        }
        return ranked.prefix(take).map(\.element.key)
    }

    /// The order tokens are evicted in: expired first, then by age.
    package static func rank(_ candidate: Candidate, now: Int64) -> Rank {
        Rank(valid: candidate.expiresOn > now, cachedAt: candidate.cachedAt)
    }

    /// Expired (`valid == false`) before valid, then older before newer.
    package struct Rank: Comparable {
        package var valid: Bool
        package var cachedAt: Int64

        package init(valid: Bool, cachedAt: Int64) {
            self.valid = valid
            self.cachedAt = cachedAt
        }

        package static func < (lhs: Rank, rhs: Rank) -> Bool {
            lhs.valid != rhs.valid ? !lhs.valid : lhs.cachedAt < rhs.cachedAt
        }
    }
}
