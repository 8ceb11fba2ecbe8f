internal import TokenCache
/// The stored access tokens of one bucket that an import meets: those it did not write itself, indexed so that each
/// imported token finds the ones it would replace or lose to without looking at the rest of the bucket.
///
/// Why: the import rule compares an imported access token with every stored token of its bucket and alias group
/// whose scopes intersect its own (``IntersectDelete/evicts(newTarget:storedTarget:)``), and with none that the
/// import wrote itself. Scanning the bucket for every token made an import of N tokens of one bucket cost N²
/// record openings. Here each stored token is opened once, when the bucket is first met, and filed under its alias
/// group and each of its scopes, newest first (by ``ImportMerge``): an imported token looks only at the lists of
/// its own scopes (those ``IntersectDelete`` compares), and at the head of each, since the newest decides whether
/// anything is newer than it. The tokens it replaces leave every list for good, so over a whole import each stored
/// token is passed over once: the work is linear in the file and the bucket, plus the sorting.
///
/// The verdicts are exactly those of comparing with every token of the bucket: the lists hold precisely the tokens
/// whose scopes intersect the lookup set, and each one found is still checked with ``IntersectDelete`` and
/// ``EnvironmentAliases``, the rules' one implementation.
struct MSALImportBucketIndex {
    /// A stored token, as its summary told.
    struct Token {
        let entryKey: [UInt8]
        let environment: String
        let scopes: ScopeSet
        let stamp: ImportMerge.Stamp
        var live = true
    }

    /// A posting list: tokens newest first; those before `start` are gone.
    private struct Posting {
        var tokens: [Int] = []
        var start = 0
    }

    private struct PostingKey: Hashable {
        let group: String
        let scope: String
    }

    private var tokens: [Token] = []
    private var postings: [PostingKey: Posting] = [:]
    private var byEntryKey: [[UInt8]: Int] = [:]
    private var sorted = true
    /// List positions looked at, for tests that count the work per imported token.
    private(set) var steps = 0

    /// Files a stored token (while the bucket is read; the lists are sorted on first use).
    mutating func add(_ token: Token, aliases: EnvironmentAliases) {
        let position = tokens.count
        tokens.append(token)
        byEntryKey[token.entryKey] = position
        let group = aliases.groupID(of: token.environment)
        for scope in token.scopes.normalized { postings[PostingKey(group: group, scope: scope), default: Posting()].tokens.append(position) }
        sorted = false
    }

    /// The bucket no longer holds the token with this entry key (the import replaced it, or wrote its identity).
    mutating func remove(entryKey: [UInt8]) {
        if let position = byEntryKey.removeValue(forKey: entryKey) { tokens[position].live = false }
    }

    /// What the import rule says of an imported token against the stored tokens of the bucket, the one of its own
    /// identity (`entryKey`, judged by the caller) left out.
    enum Verdict: Equatable {
        /// A stored token of intersecting scopes is as new or newer: the imported one is not written.
        case newerStored
        /// The imported token is newer than every one it meets: these (entry keys) are superseded.
        case supersedes([[UInt8]])
    }

    mutating func verdict(
        scopes: ScopeSet, environment: String, stamp incoming: ImportMerge.Stamp, entryKey: [UInt8], aliases: EnvironmentAliases
    ) -> Verdict {
        sortIfNeeded()
        let reserved = scopes.withoutReservedScopes
        let lookup = reserved.isEmpty ? scopes : reserved
        let group = aliases.groupID(of: environment)
        // The newest live token of each list decides: if the imported one is not newer than it, something newer
        // answers for these scopes.
        for scope in lookup.normalized {
            let key = PostingKey(group: group, scope: scope)
            guard var posting = postings[key] else { continue }
            while posting.start < posting.tokens.count, !tokens[posting.tokens[posting.start]].live {
                posting.start += 1
                steps += 1
            }
            postings[key] = posting
            var position = posting.start
            while position < posting.tokens.count {
                steps += 1
                let token = tokens[posting.tokens[position]]
                position += 1
                guard token.live, token.entryKey != entryKey, meets(token, scopes: scopes, environment: environment, aliases: aliases)
                else { continue }
                if !ImportMerge.incomingWins(existing: token.stamp, incoming: incoming) { return .newerStored }
                break
            }
        }
        // Newer than all: every live token of these lists goes (each leaves all lists, so it is passed over once).
        var superseded: [[UInt8]] = []
        for scope in lookup.normalized {
            let key = PostingKey(group: group, scope: scope)
            guard var posting = postings[key] else { continue }
            var kept: [Int] = []
            for index in posting.tokens[posting.start...] {
                steps += 1
                let token = tokens[index]
                guard token.live else { continue }
                guard token.entryKey != entryKey, meets(token, scopes: scopes, environment: environment, aliases: aliases) else {
                    kept.append(index)
                    continue
                }
                tokens[index].live = false
                byEntryKey[token.entryKey] = nil
                superseded.append(token.entryKey)
            }
            posting.tokens = kept
            posting.start = 0
            postings[key] = posting
        }
        return .supersedes(superseded)
    }

    /// The rule itself, for a token found in a list.
    private func meets(_ token: Token, scopes: ScopeSet, environment: String, aliases: EnvironmentAliases) -> Bool {
        aliases.areAliases(token.environment, environment) && IntersectDelete.evicts(newTarget: scopes, storedTarget: token.scopes)
    }

    private mutating func sortIfNeeded() {
        guard !sorted else { return }
        let tokens = self.tokens
        for key in postings.keys {
            postings[key]!.tokens.sort { ImportMerge.incomingWins(existing: tokens[$1].stamp, incoming: tokens[$0].stamp) }
        }
        sorted = true
    }
}
