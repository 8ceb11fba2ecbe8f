internal import TokenCacheRecords

/// Opens the sealed parts of an access-token record: what the judgement of a lookup needs from the record layer.
protocol AccessTokenOpening {
    /// Lends the record's sealed summary (FORMAT.md §5.4), or one built from its body when it has none.
    func withSummary<R>(_ entry: BucketEntry, _ body: (AccessTokenSummaryView) throws(FormatError) -> R) throws(FormatError) -> R
    /// The record's body, decoded; strings equal to the query's are shared with it.
    func decodeAccessToken(_ entry: BucketEntry, reusing query: SilentLookupQuery) -> Result<StoredEntity<AccessToken>, CorruptRecord>
    /// Names a record whose summary could not be opened.
    func corruptAccessToken(_ entry: BucketEntry, _ error: FormatError) -> CorruptRecord
}

/// The last step of a silent lookup: which token of a bucket answers the query, judged against the plan alone.
///
/// A bucket of one token is decided by its body (opening its summary first would only be a second decryption).
/// With several, the sealed summaries pick the preferred usable token (``CandidateOrder``), and only its body is
/// opened; a body found damaged yields the next best. Damaged records are collected in ``corrupt``, never chosen.
///
/// The plan and the query are lent to each call, not kept: a copy would retain every string of the query.
struct AccessTokenChoice<Opener: AccessTokenOpening> {
    let opener: Opener
    /// Damaged tokens met, in the order met.
    private(set) var corrupt: [CorruptRecord] = []

    init(opener: Opener) {
        self.opener = opener
    }

    /// What the judgement of a bucket needs next.
    enum Verdict {
        /// The usable, preferred token; or nil: the bucket has none.
        case decided(StoredEntity<AccessToken>?)
        /// Every token of the bucket (without a damaged lone one when `skippingLone`): the fetch kept only some.
        case readWholeBucket(skippingLone: Bool)
    }

    /// Judges, against `plan`, a bucket of `query`'s whose fetch found `contents`.
    mutating func judge(_ contents: BucketContents, against plan: SilentLookupPlan, for query: SilentLookupQuery) -> Verdict {
        switch contents {
        case .empty:
            return .decided(nil)
        case .lone(let only), .one(let only):
            switch opener.decodeAccessToken(only, reusing: query) {
            case .success(let stored):
                return .decided(plan.accepts(stored.entity) ? stored : nil)
            case .failure(let record):
                corrupt.append(record)
                guard case .lone = contents else { return .decided(nil) }
                // A damaged lone token is not moved when others arrive (FORMAT.md §4.3): judge any that did.
                return .readWholeBucket(skippingLone: true)
            }
        case .two(let first, let second):
            return .decided(best(of: BucketEntryPair(first: first, second: second), against: plan, for: query))
        case .several(let entries):
            return .decided(best(of: entries, against: plan, for: query))
        case .more:
            return .readWholeBucket(skippingLone: false)
        }
    }

    /// The preferred usable token's decoded body among `entries`; if that body is damaged, the next best.
    private mutating func best(of entries: some Collection<BucketEntry>, against plan: SilentLookupPlan, for query: SilentLookupQuery)
        -> StoredEntity<AccessToken>?
    {
        var damagedBodies: [[UInt8]] = []
        while let candidate = bestBySummary(entries, against: plan, excluding: damagedBodies, reportingDamage: damagedBodies.isEmpty) {
            switch opener.decodeAccessToken(candidate, reusing: query) {
            case .success(let stored):
                return stored
            case .failure(let record):
                corrupt.append(record)
                damagedBodies.append(Array(candidate.key))
            }
        }
        return nil
    }

    /// The entry whose summary is usable and preferred, skipping `excluded` keys (bodies found damaged). Damaged
    /// summaries are reported on the first pass only.
    private mutating func bestBySummary(
        _ entries: some Collection<BucketEntry>, against plan: SilentLookupPlan, excluding excluded: [[UInt8]], reportingDamage: Bool
    ) -> BucketEntry? {
        var chosen: (entry: BucketEntry, cachedAt: Int64, expiresOn: Int64)? = nil
        // The closure tests each summary through a pointer to the plan: capturing the plan itself would copy its
        // arrays (scopes, hosts, keys) for every summary, measurably at these speeds.
        withUnsafePointer(to: plan) { plan in
            for entry in entries {
                if !excluded.isEmpty, excluded.contains(where: { $0.elementsEqual(entry.key) }) { continue }
                do throws(FormatError) {
                    let preferred = try opener.withSummary(entry) { summary throws(FormatError) -> (cachedAt: Int64, expiresOn: Int64)? in
                        guard plan.pointee.accepts(summary) else { return nil }
                        if let current = chosen,
                            !CandidateOrder.prefers(
                                cachedAt: summary.cachedAt, expiresOn: summary.expiresOn, tiebreak: entry.key,
                                over: current.cachedAt, current.expiresOn, current.entry.key
                            )
                        {
                            return nil
                        }
                        return (summary.cachedAt, summary.expiresOn)
                    }
                    if let preferred { chosen = (entry, preferred.cachedAt, preferred.expiresOn) }
                } catch {
                    if reportingDamage { corrupt.append(opener.corruptAccessToken(entry, error)) }
                }
            }
        }
        return chosen?.entry
    }
}
