import Synchronization
import TokenCache

/// The client's in-process L1: recent answers of ``TokenClient/token(for:refresh:)`` that the store gave,
/// each stamped with what its lookup read (``SilentLookupResult/stamp``), and served only while the store says the
/// stamp still holds (``TokenStore/isCurrent(_:)``).
///
/// **Why it is never stale (a local store).** A hit is served only while the store's last commit id (``TokenStore/lastCommitID``,
/// LMDB's last transaction id, read from the newer meta page in the map, without a transaction) still equals the
/// stamp. Any commit, by any process, changes it: a token another process replaced, removed or re-added, a sign-out, a
/// rekey. The stamp is the lookup's own snapshot, not the last commit id read around the lookup: LMDB shows a commit
/// in the meta page a moment before new read transactions see it, so a last commit id read just before a lookup can
/// already be newer than what the lookup reads, and would vouch for a state it never saw. The snapshot id is never
/// newer than the last commit id; while they differ the entry just misses. The check is coarse (one commit anywhere
/// empties the L1 in effect), which is what makes it this simple to prove; a store whose writes are rare next to its
/// reads, the usual token cache, keeps almost every entry.
///
/// **A shared store** judges finer: a stamp names the buckets its lookup read (the account's, the application's,
/// the global one) with their versions, and holds until a change to one of them is announced, committed by this host,
/// or possibly missed while the store's change listener was away; a change to another account leaves it standing.
///
/// **Why it never serves an unusable token.** A hit also needs the store's expiry rule (``AccessTokenExpiry``) to
/// find it usable with no refresh due: at least the usability margin (300 s) left before
/// the token's expiry, its `cached_at` not after now (a clock set back) and its `refresh_on` not passed (then the
/// slow path answers and starts the background refresh), all judged by the client's clock at the hit.
///
/// **Bounded, and secrets wiped.** At most `capacity` entries; the oldest goes first. Tokens are ``Secret``s,
/// whose bytes live in zeroizing memory that is wiped when the last copy goes, which for an evicted entry is the
/// eviction unless the app still holds the result.
final class AnswerCache: Sendable {
    private struct Entry {
        let result: TokenResult
        let stamp: AnswerStamp
    }

    private struct State {
        var entries: [Key: Entry] = [:]
        /// Keys in insertion order, for eviction; a key may appear again after it was replaced.
        var order: [Key] = []
        var head = 0
        /// Answers given, counted here rather than in an atomic: the lock is held anyway.
        var hits = 0
    }

    /// A request as the L1's key: equal when the requests are equal, hashed over the fields that tell an app's requests
    /// apart (the account and the scopes; an app has one or a few clients and authorities, and hashing costs per
    /// byte: requests that differ in those only share a hash bucket, and equality tells them apart).
    private struct Key: Hashable {
        let request: TokenRequest

        static func == (lhs: Key, rhs: Key) -> Bool { lhs.request == rhs.request }

        func hash(into hasher: inout Hasher) {
            // One word per field, mixed from the text's bytes a word at a time: a tenth of what feeding the bytes to
            // the hasher costs. The hasher's per-process seed still randomises the table.
            var words = Self.mixed(request.homeAccountID)
            for scope in request.scopes { words = (words &* 0x9E37_79B9_7F4A_7C15) ^ Self.mixed(scope) }
            hasher.combine(words)
        }

        /// The UTF-8 of `text` mixed into one word, eight bytes at a time.
        private static func mixed(_ text: String) -> UInt64 {
            var text = text
            return text.withUTF8 { bytes in
                var state = UInt64(truncatingIfNeeded: bytes.count) &* 0xFF51_AFD7_ED55_8CCD
                var offset = 0
                while offset + 8 <= bytes.count {
                    state = (state ^ UInt64(littleEndian: UnsafeRawPointer(bytes.baseAddress! + offset).loadUnaligned(as: UInt64.self)))
                        &* 0xC4CE_B9FE_1A85_EC53
                    state ^= state >> 29
                    offset += 8
                }
                var tail: UInt64 = 0
                while offset < bytes.count {
                    tail = (tail << 8) | UInt64(bytes[offset])
                    offset += 1
                }
                state = (state ^ tail) &* 0xC4CE_B9FE_1A85_EC53
                return state ^ (state >> 32)
            }
        }
    }

    let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) { self.capacity = capacity }

    /// The cached answer to `request`, if `isCurrent` says what it was read from still holds and it is still usable
    /// at `now` with no refresh recommended.
    func answer(_ request: TokenRequest, now: Int64, isCurrent: (AnswerStamp) -> Bool) -> TokenResult? {
        guard capacity > 0 else { return nil }
        return state.withLock { state in
            guard let entry = state.entries[Key(request: request)], isCurrent(entry.stamp) else { return nil }
            let result = entry.result
            // The lookup's own rule (Docs/Semantics.md), called rather than copied: enough time left, not cached in the
            // future (a clock set back), and no refresh due (then the lookup answers, and starts it).
            let usability = AccessTokenExpiry.usability(expiresOn: result.expiresOn, cachedAt: result.cachedAt, refreshOn: result.refreshOn, now: now)
            guard usability == .usable(refreshRecommended: false) else { return nil }
            state.hits += 1
            return result
        }
    }

    /// Keeps `result` as the answer to `request` that a lookup stamped `stamp` gave.
    func keep(_ result: TokenResult, for request: TokenRequest, stamp: AnswerStamp) {
        guard capacity > 0 else { return }
        state.withLock { state in
            let key = Key(request: request)
            if state.entries.updateValue(Entry(result: result, stamp: stamp), forKey: key) == nil {
                state.order.append(key)
            }
            while state.entries.count > capacity, state.head < state.order.count {
                state.entries[state.order[state.head]] = nil
                state.head += 1
            }
            // Drop the evicted keys from the front now and then, so that the order list stays about `capacity` long.
            if state.head > capacity {
                state.order.removeFirst(state.head)
                state.head = 0
            }
        }
    }

    /// How many answers the L1 gave.
    var hits: Int { state.withLock { $0.hits } }

    /// How many answers are kept.
    var count: Int { state.withLock { $0.entries.count } }

    /// Forgets every answer.
    func removeAll() { state.withLock { $0 = State(hits: $0.hits) } }
}
