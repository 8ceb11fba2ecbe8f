import Synchronization
internal import TokenCacheStorage
internal import TokenCacheRecords

// The cap's enforcement: what every write that adds an access token runs, so it stays with the writes. Setting or
// lowering the cap is an operator's command, in TokenCacheOperations; it evicts through `evictOverCap` too, so that
// both choose victims alike.
extension CacheWriter {
    /// Tokens evicted per write at most: a write that finds the store far over its cap (a cap just lowered by an
    /// older writer, or records added by one that does not know caps) brings it down over the next writes.
    static let maximumEvictionsPerWrite = 64

    /// After a new access token was stored under `key`: evicts others while the store is over its cap.
    func accessTokenAdded(storageKey key: [UInt8]) throws {
        guard let cap = try cap() else { return }
        let evicted = try evictOverCap(cap, now: now, protecting: key, atMost: Self.maximumEvictionsPerWrite)
        accessTokensEvicted += evicted
    }

    /// The store's cap, read once per transaction. A damaged cap record counts as no cap: it must not stop every
    /// write that adds a token (`verify` reports it, `verify --repair` removes it, `cap` sets it again).
    private func cap() throws -> Int? {
        if let loaded = loadedCap { return loaded }
        var cap: Int? = nil
        do {
            cap = try store.accessTokenCap(in: transaction)
        } catch let error as TokenCacheError where error.code == .corruptRecord {}
        loadedCap = .some(cap)
        return cap
    }

    /// Evicts access tokens, `atMost` of them, while the store holds more than `cap`; never the token under
    /// `protected` (the one just written, or its bucket's lone key). Returns how many went.
    package func evictOverCap(_ cap: Int, now: Int64, protecting protected: [UInt8]?, atMost limit: Int) throws -> Int {
        var evicted = 0
        var stalls = 0
        while evicted < limit {
            let excess = try transaction.count(in: KeySpace.accessTokens) - cap
            guard excess > 0 else { break }
            let sample = try sampleAccessTokens(excluding: protected)
            let victims = EvictionChoice.victims(from: sample, needed: min(excess, limit - evicted), now: now)
            let removed = try deleteRecords(AccessToken.self, keys: victims)
            evicted += removed
            // A sample of only damaged records (or only the protected one) removes nothing; a few tries, then the
            // next write goes on.
            if removed == 0 { stalls += 1; if stalls == 4 { break } }
        }
        return evicted
    }

    /// Up to ``EvictionChoice/sampleSize`` readable access tokens from a random point of the key space, wrapping
    /// around its end; the token under `protected` (or its bucket's lone key) is never among them.
    private func sampleAccessTokens(excluding protected: [UInt8]?) throws -> [EvictionChoice.Candidate] {
        var sample: [EvictionChoice.Candidate] = []
        let start = (0..<RecordStore.bucketPrefixCount).map { _ in UInt8.random(in: .min ... .max) }
        let loneKey = protected.map { Array($0.prefix(RecordStore.bucketPrefixCount)) }
        func visit(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, until end: [UInt8]?) -> Bool {
            let storageKey = Array(key)
            if let end, !storageKey.lexicographicallyPrecedes(end) { return false }
            if storageKey != protected, storageKey != loneKey, let summary = try? store.openSummary(value, key: storageKey) {
                sample.append(EvictionChoice.Candidate(key: storageKey, cachedAt: summary.cachedAt, expiresOn: summary.expiresOn))
            }
            return sample.count < EvictionChoice.sampleSize
        }
        try transaction.forEach(in: KeySpace.accessTokens, from: start) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in visit(key, value, until: nil) } } }
        if sample.count < EvictionChoice.sampleSize {
            try transaction.forEach(in: KeySpace.accessTokens, from: []) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in visit(key, value, until: start) } } }
        }
        return sample
    }

    /// The opportunistic sweep: reads the next ``ExpirySweep/size`` access tokens after where the last sweep stopped (this
    /// transaction's, else the store's last committed one; wrapping around), and removes those expired at `now`, except the one under `protected`. Each ingest
    /// runs one, so that expired tokens leave the store at a bounded cost per write even in buckets nobody writes
    /// again. Returns how many it removed.
    func sweepExpiredAccessTokens(now: Int64, protecting protected: [UInt8]) throws -> Int {
        var doomed: [[UInt8]] = []
        var examined = 0
        var last: [UInt8]? = nil
        let start = sweepCursor ?? sweepStart ?? store.sweepCursor.withLock { $0.key }
        let loneKey = Array(protected.prefix(RecordStore.bucketPrefixCount))
        try transaction.forEach(in: KeySpace.accessTokens, from: start) { key, value in key.withUnsafeBytes { key in value.withUnsafeBytes { value in
            examined += 1
            let storageKey = Array(key)
            last = storageKey
            if storageKey != protected, storageKey != loneKey, let summary = try? store.openSummary(value, key: storageKey),
                summary.expiresOn <= now
            {
                doomed.append(storageKey)
            }
            return examined < ExpirySweep.size
        } } }
        // At the end of the key space, the next sweep starts again from its beginning.
        // Kept by this transaction (its next sweep continues from it) and handed to the store only once it commits
        // (``RecordStore/write(now:freeingSpace:_:)``): a body that re-runs, or a transaction that aborts, moves no
        // cursor outside it.
        sweepCursor = examined < ExpirySweep.size ? [] : (last.map { $0 + [0] } ?? [])
        return try deleteRecords(AccessToken.self, keys: doomed)
    }
}

/// The expiry sweep's stride, which an ingest's read plan names too (``IngestPlan/readPlan(sweepingFrom:)``).
enum ExpirySweep {
    /// Access tokens one sweep reads.
    static let size = 16
}
